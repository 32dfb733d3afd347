/** Synchronous replication as the cluster asks for it (CloudNativePG's vocabulary). */
export interface SynchronousReplication {
  /** How many standbys must confirm a commit: `ANY number (...)`. */
  readonly number: number;
  /** required: commits wait while standbys are missing (RPO 0). preferred: degrade to async. */
  readonly dataDurability: 'required' | 'preferred';
}

const quote = (name: string): string => `"${name.replaceAll('"', '""')}"`;

/**
 * The synchronous_standby_names a primary should have. `required` lists every standby whether or
 * not it is connected, so commits block without them; `preferred` lists only the standbys that are
 * streaming now, and asks for no more of them than there are, so commits never block.
 */
export function desiredSynchronousStandbyNames(
  config: SynchronousReplication | undefined,
  standbys: readonly string[],
  streaming: ReadonlySet<string>,
): string {
  if (!config) return '';
  const names = (
    config.dataDurability === 'required' ? [...standbys] : standbys.filter((s) => streaming.has(s))
  ).sort();
  const number = Math.min(config.number, names.length);
  if (number === 0) return '';
  return `ANY ${number} (${names.map(quote).join(', ')})`;
}
