// iptables housekeeping for the cluster: removal of every chain the cluster's components made
// (KUBE-*, CNI-*, and the HOMEOSTAT-EGRESS guard of clusters from before egress-guard.ts), rule by
// rule, without touching anyone else's rules.
import { chainPrefix } from './layout.ts';
import { iptablesFamilies } from './iptables-snapshot.ts';
import { run, tryRun } from './run-command.ts';

const tables = ['filter', 'nat', 'mangle', 'raw'] as const;
/** Chains created by kube-proxy, kube-router and the kubelet (KUBE-), the CNI plugins (CNI-) and this launcher. */
const clusterChain = new RegExp(`^(KUBE-|CNI-|${chainPrefix})`);

/** Removes every KUBE-*, CNI-* and HOMEOSTAT-* chain and every rule that jumps to one. */
export async function removeClusterChains(): Promise<void> {
  for (const family of iptablesFamilies) {
    for (const table of tables) {
      const saved = await tryRun(`${family}-save`, ['-t', table]);
      if (!saved.ok) continue;
      const lines = saved.stdout.split('\n');
      const chains = lines
        .filter((l) => l.startsWith(':'))
        .map((l) => l.slice(1).split(' ')[0] ?? '')
        .filter((c) => clusterChain.test(c));
      // Rules in other chains (FORWARD, PREROUTING...) that jump into ours.
      for (const line of lines) {
        if (!line.startsWith('-A ')) continue;
        const words = splitRule(line);
        const chain = words[1] ?? '';
        if (clusterChain.test(chain)) continue;
        const target = words[words.findIndex((w) => w === '-j' || w === '-g') + 1] ?? '';
        if (!clusterChain.test(target)) continue;
        await run(family, ['-t', table, '-D', chain, ...words.slice(2)]);
      }
      for (const chain of chains) await run(family, ['-t', table, '-F', chain]);
      for (const chain of chains) await run(family, ['-t', table, '-X', chain]);
    }
  }
}

/** Splits an iptables-save rule line into arguments, honouring double quotes. */
export function splitRule(line: string): string[] {
  const words: string[] = [];
  let current = '';
  let quoted = false;
  let inWord = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c === '\\' && quoted && i + 1 < line.length) {
      current += line[++i];
    } else if (c === '"') {
      quoted = !quoted;
      inWord = true;
    } else if (c === ' ' && !quoted) {
      if (inWord) words.push(current);
      current = '';
      inWord = false;
    } else {
      current += c;
      inWord = true;
    }
  }
  if (inWord) words.push(current);
  return words;
}
