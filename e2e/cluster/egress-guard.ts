// The egress guard: pod traffic may go to other pods or to this machine, never out of it. It is an
// nftables table of its own whose forward chain runs before iptables' filter table, so no ACCEPT
// in iptables can let such traffic past: kube-router keeps its jump first in FORWARD and accepts
// every packet its policies allow (ADR 0504), which an iptables guard behind it would never see.
import { network } from './layout.ts';
import { run, tryRun } from './run-command.ts';

/** The guard's table (family ip: the pod network is IPv4 only). */
export const egressGuardTable = 'homeostat-egress';

// iptables' filter table hooks forward at priority 0; the guard's chain runs first at -10.
const guardRuleset = (): string => `
table ip ${egressGuardTable} {
  chain forward {
    type filter hook forward priority -10; policy accept;
    iifname "${network.bridge}" oifname != "${network.bridge}" reject with icmp type net-prohibited comment "homeostat: pods stay on this machine"
  }
}
`;

/** Creates the guard, or replaces it with the current one: one transaction, never a gap. */
export async function ensureEgressGuard(): Promise<void> {
  // `add` makes the delete safe when the table is absent; the three steps commit together.
  await run('nft', ['-f', '-'], {
    input: `add table ip ${egressGuardTable}\ndelete table ip ${egressGuardTable}\n${guardRuleset()}`,
  });
}

/** Removes the guard's table, if present. */
export async function removeEgressGuard(): Promise<void> {
  if (await egressGuardPresent()) await run('nft', ['delete', 'table', 'ip', egressGuardTable]);
}

/** Whether the guard's table exists. */
export async function egressGuardPresent(): Promise<boolean> {
  const tables = await tryRun('nft', ['list', 'tables', 'ip']);
  return tables.ok && tables.stdout.split('\n').includes(`table ip ${egressGuardTable}`);
}
