/** Synchronous replication as the cluster asks for it (CloudNativePG's vocabulary). */
export interface SynchronousReplication {
  /** How many standbys must confirm a commit: `ANY number (...)`. */
  readonly number: number;
  /** required: commits wait while standbys are missing (RPO 0). preferred: degrade to async. */
  readonly dataDurability: 'required' | 'preferred';
}

const quote = (name: string): string => `"${name.replaceAll('"', '""')}"`;

/**
 * The standbys a primary should count as synchronous: the names in its synchronous_standby_names.
 * `preferred`: the streaming ones, so commits never block. `required`: the streaming ones too, for a
 * standby that does not stream acknowledges nothing; while fewer than `number` stream, as many
 * others as it takes so commits wait (RPO 0), those in `preferred` first, in its order (the set
 * the failover counts on, which already holds them: ADR 0220), then by name. A standby that never
 * streamed is thus left out, and the failover does not wait for it to answer.
 */
export function synchronousSet(
  config: SynchronousReplication | undefined,
  standbys: readonly string[],
  streaming: ReadonlySet<string>,
  preferred: readonly string[] = [],
): string[] {
  if (!config) return [];
  const names = standbys.filter((s) => streaming.has(s)).sort();
  if (config.dataDurability === 'preferred') return names;
  const padding = [
    ...preferred.filter((s) => standbys.includes(s)),
    ...[...standbys].sort().filter((s) => !preferred.includes(s)),
  ];
  for (const name of padding) {
    if (names.length >= config.number) break;
    if (!names.includes(name)) names.push(name);
  }
  return names.sort();
}

/** synchronous_standby_names for `names` (synchronousSet): never asks for more than there are. */
export function synchronousStandbyNames(
  config: SynchronousReplication | undefined,
  names: readonly string[],
): string {
  const number = Math.min(config?.number ?? 0, names.length);
  if (number === 0) return '';
  return `ANY ${number} (${[...names].sort().map(quote).join(', ')})`;
}

/** The synchronous_standby_names a primary should have: synchronousSet, formatted. */
export function desiredSynchronousStandbyNames(
  config: SynchronousReplication | undefined,
  standbys: readonly string[],
  streaming: ReadonlySet<string>,
  preferred: readonly string[] = [],
): string {
  return synchronousStandbyNames(config, synchronousSet(config, standbys, streaming, preferred));
}
