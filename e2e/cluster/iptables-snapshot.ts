// What iptables holds (both families), and what changed between two such snapshots: how `down`
// knows whether the cluster left a chain or rule behind, or removed one it should not have.
import { run } from './run-command.ts';

export const iptablesFamilies = ['iptables', 'ip6tables'] as const;

/**
 * Every line of `iptables-save` for both families, each prefixed with its family, without
 * comments, `COMMIT` and counters. `up` records one in the machine's "before" file, `down` takes
 * another and compares them with `iptablesChanges`.
 */
export async function iptablesSnapshot(): Promise<string[]> {
  const lines: string[] = [];
  for (const family of iptablesFamilies) {
    const saved = await run(`${family}-save`, []);
    for (const line of saved.split('\n')) {
      if (line.startsWith('#') || line.trim() === '' || line === 'COMMIT') continue;
      lines.push(`${family} ${line.replace(/ \[\d+:\d+\]$/, '')}`);
    }
  }
  return lines;
}

/** Chains and rules present in one snapshot and not the other, as `<family> <table> <line>`. */
export interface IptablesChanges {
  added: string[];
  removed: string[];
}

/** What changed from `before` to `now` (two `iptablesSnapshot` results). */
export function iptablesChanges(before: readonly string[], now: readonly string[]): IptablesChanges {
  const had = significantEntries(before);
  const has = significantEntries(now);
  return { added: withoutEach(has, had), removed: withoutEach(had, has) };
}

/**
 * The snapshot's chains and rules, each qualified by family and table. Left out: table headers,
 * and built-in chains with the ACCEPT policy. A table appears in `iptables-save` once anything
 * has used it (even a lookup, by kube-proxy or the kubelet) and the kernel keeps it, empty, with
 * its built-in chains set to ACCEPT; that is the same state as no table at all, so it is no
 * change. A built-in chain with another policy (FORWARD DROP) is kept, so a changed policy shows.
 */
function significantEntries(snapshot: readonly string[]): string[] {
  const entries: string[] = [];
  const tableOf = new Map<string, string>();
  for (const line of snapshot) {
    const space = line.indexOf(' ');
    const family = line.slice(0, space);
    const rest = line.slice(space + 1);
    if (rest.startsWith('*')) {
      tableOf.set(family, rest.slice(1));
      continue;
    }
    if (isDefaultBuiltinChain(rest)) continue;
    entries.push(`${family} ${tableOf.get(family) ?? '?'} ${rest}`);
  }
  return entries;
}

/** `:FORWARD ACCEPT` is a built-in chain at its default policy; user chains read `:NAME -`. */
function isDefaultBuiltinChain(line: string): boolean {
  return /^:\S+ ACCEPT$/.test(line);
}

/** `from` without one occurrence of each item of `other` (a rule present twice counts twice). */
function withoutEach(from: readonly string[], other: readonly string[]): string[] {
  const remaining = new Map<string, number>();
  for (const item of other) remaining.set(item, (remaining.get(item) ?? 0) + 1);
  return from.filter((item) => {
    const left = remaining.get(item) ?? 0;
    if (left === 0) return true;
    remaining.set(item, left - 1);
    return false;
  });
}
