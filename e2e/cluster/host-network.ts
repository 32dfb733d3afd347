// The machine-level changes the cluster needs (a bridge, forwarding, bridge netfilter) and
// their exact reversal. What the machine looked like before `up` is recorded once, so `down`
// restores it even after a crash.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { network, paths } from './layout.ts';
import { iptablesSnapshot } from './iptables-snapshot.ts';
import { listSharedHostPaths } from './host-leftovers.ts';
import { run, tryRun } from './run-command.ts';

/**
 * Kernel settings the cluster changes: forwarding and bridge netfilter (by us and the bridge CNI
 * plugin), and the ones the kubelet tunes at start (it sets overcommit and panic behaviour).
 */
const trackedSysctls = [
  'net/ipv4/ip_forward',
  'net/ipv6/conf/all/forwarding',
  'net/bridge/bridge-nf-call-iptables',
  'net/bridge/bridge-nf-call-ip6tables',
  'net/ipv4/conf/all/route_localnet',
  'vm/overcommit_memory',
  'vm/panic_on_oom',
  'kernel/panic',
  'kernel/panic_on_oops',
  'kernel/keys/root_maxkeys',
  'kernel/keys/root_maxbytes',
];

/** What the machine looked like before the cluster touched it. */
export interface MachineBefore {
  sysctls: Record<string, string>;
  iptables: string[];
  interfaces: string[];
  netns: string[];
  /** Shared host paths the cluster writes into (pod logs, CNI cache), with what they held. */
  hostPaths: Record<string, string[] | null>;
}

const netnsDir = '/var/run/netns';

/** Records the machine's state, unless a record from an earlier `up` exists (then keeps that one). */
export async function recordMachineBefore(): Promise<MachineBefore> {
  const existing = readMachineBefore();
  if (existing) return existing;
  const before: MachineBefore = {
    sysctls: Object.fromEntries(
      trackedSysctls.filter((s) => existsSync(`/proc/sys/${s}`)).map((s) => [s, readSysctl(s)]),
    ),
    iptables: await iptablesSnapshot(),
    interfaces: await interfaceNames(),
    netns: existsSync(netnsDir) ? readdirSync(netnsDir) : [],
    hostPaths: listSharedHostPaths(),
  };
  await writeFile(paths.before, JSON.stringify(before, null, 2));
  return before;
}

/** The record written by `recordMachineBefore`, if any. */
export function readMachineBefore(): MachineBefore | undefined {
  try {
    return JSON.parse(readFileSync(paths.before, 'utf8')) as MachineBefore;
  } catch {
    return undefined;
  }
}

/** Creates the pod bridge with the node address on it, and turns on forwarding. */
export async function setUpBridge(): Promise<void> {
  const links = await interfaceNames();
  if (!links.includes(network.bridge)) {
    await run('ip', ['link', 'add', network.bridge, 'type', 'bridge']);
  }
  const addresses = await run('ip', ['-o', '-4', 'addr', 'show', 'dev', network.bridge]);
  if (!addresses.includes(`${network.nodeIp}/`)) {
    await run('ip', ['addr', 'add', `${network.nodeIp}/24`, 'dev', network.bridge]);
  }
  await run('ip', ['link', 'set', network.bridge, 'up']);
  writeSysctl('net/ipv4/ip_forward', '1');
  // Service traffic between pods on the same bridge must pass kube-proxy's iptables rules.
  writeSysctl('net/bridge/bridge-nf-call-iptables', '1');
}

/** Deletes the pod interfaces, the bridge and the network namespaces the cluster made. */
export async function removeBridge(before: MachineBefore | undefined): Promise<void> {
  const links = await interfaceNames();
  if (links.includes(network.bridge)) {
    const members = await run('ip', ['-o', 'link', 'show', 'master', network.bridge]);
    for (const line of members.split('\n')) {
      const name = /^\d+: ([^:@]+)/.exec(line)?.[1];
      if (name) await tryRun('ip', ['link', 'delete', name]);
    }
    await run('ip', ['link', 'delete', network.bridge]);
  }
  if (existsSync(netnsDir)) {
    const keep = new Set(before?.netns ?? []);
    for (const ns of readdirSync(netnsDir)) {
      // containerd names pod namespaces cni-<uuid>; leave any other namespace alone.
      if (ns.startsWith('cni-') && !keep.has(ns)) await tryRun('ip', ['netns', 'delete', ns]);
    }
  }
}

/** Puts every tracked kernel setting back to its recorded value. */
export function restoreSysctls(before: MachineBefore): void {
  for (const [name, value] of Object.entries(before.sysctls)) {
    if (readSysctl(name) !== value) writeSysctl(name, value);
  }
}

/** Names of the machine's network interfaces. */
export async function interfaceNames(): Promise<string[]> {
  const out = await run('ip', ['-o', 'link', 'show']);
  return out
    .split('\n')
    .map((line) => /^\d+: ([^:@]+)/.exec(line)?.[1])
    .filter((n): n is string => n !== undefined);
}

function readSysctl(name: string): string {
  return readFileSync(`/proc/sys/${name}`, 'utf8').trim();
}

function writeSysctl(name: string, value: string): void {
  try {
    writeFileSync(`/proc/sys/${name}`, value);
  } catch (error) {
    throw new Error(`could not set ${name.replaceAll('/', '.')}=${value}: ${String(error)}`, {
      cause: error,
    });
  }
}
