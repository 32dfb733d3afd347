/** Synchronous replication as the cluster asks for it (CloudNativePG's vocabulary). */
export interface SynchronousReplication {
  /** How many standbys must confirm a commit: `ANY number (...)`. */
  readonly number: number;
  /** required: commits wait while standbys are missing (RPO 0). preferred: degrade to async. */
  readonly dataDurability: 'required' | 'preferred';
}

const quote = (name: string): string => `"${name.replaceAll('"', '""')}"`;

/**
 * The name standing in synchronous_standby_names for a standby the primary must not count on yet
 * (ADR 0220): no standby connects under it, so it acknowledges nothing, yet it keeps the list as
 * long as the standbys, so `required` commits still wait for as many standbys as asked.
 */
export const unlistedName = (name: string): string => `${name} (rejoining)`;

/**
 * The synchronous_standby_names a primary should have. `required` lists every standby whether or
 * not it is connected, so commits block without them; `preferred` lists only the standbys that are
 * streaming now, and asks for no more of them than there are, so commits never block. A standby in
 * `unlisted` is never listed by its name: `required` lists a stand-in for it, `preferred` nothing.
 */
export function desiredSynchronousStandbyNames(
  config: SynchronousReplication | undefined,
  standbys: readonly string[],
  streaming: ReadonlySet<string>,
  unlisted: ReadonlySet<string> = new Set(),
): string {
  if (!config) return '';
  const names = (
    config.dataDurability === 'required'
      ? standbys.map((s) => (unlisted.has(s) ? unlistedName(s) : s))
      : standbys.filter((s) => streaming.has(s) && !unlisted.has(s))
  ).sort();
  const number = Math.min(config.number, names.length);
  if (number === 0) return '';
  return `ANY ${number} (${names.map(quote).join(', ')})`;
}
