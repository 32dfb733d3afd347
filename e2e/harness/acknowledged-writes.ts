// What a write load saw, whatever the database: every acknowledged write (an id and when), every
// failed one (when), and the measures the suites and benchmarks take from them around a fault.
// The PostgreSQL and etcd loads both record this shape.
import { setTimeout as sleep } from 'node:timers/promises';

export interface AcknowledgedWrite {
  readonly id: number;
  /** Date.now() when the write was acknowledged. */
  readonly at: number;
}

export interface AcknowledgedWrites {
  readonly acked: readonly AcknowledgedWrite[];
  /** Date.now() of each failed write or connection. */
  readonly failures: readonly number[];
}

/**
 * How long writes stopped after a fault at `since`, once the cluster has settled at `until`: from
 * `since` to the first row acknowledged after the last failed write before `until` (0 when no
 * write failed); undefined while no row has been acknowledged after that failure yet.
 */
export function writeOutageSeconds(
  load: AcknowledgedWrites,
  since: number,
  until: number,
): number | undefined {
  const failures = load.failures.filter((t) => t >= since && t <= until);
  const lastFailure = failures.at(-1);
  if (lastFailure === undefined) return 0;
  const resumed = load.acked.find((row) => row.at > lastFailure);
  return resumed === undefined ? undefined : (resumed.at - since) / 1000;
}

/**
 * The longest time no write was acknowledged between `since` and `until`, in seconds: the pause a
 * client saw. For a planned operation (a switchover, a rolling restart) this is its cost, while
 * writeOutageSeconds also counts the time before the operation stopped writes.
 */
export function longestWritePauseSeconds(load: AcknowledgedWrites, since: number, until: number): number {
  const before = load.acked.filter((row) => row.at < since).at(-1);
  const times = [
    ...(before ? [before.at] : [since]),
    ...load.acked.filter((row) => row.at >= since && row.at <= until).map((row) => row.at),
  ];
  let longest = 0;
  for (let i = 1; i < times.length; i++) longest = Math.max(longest, (times[i] ?? 0) - (times[i - 1] ?? 0));
  return longest / 1000;
}

/**
 * Waits until a fault at `since` has shown in the load and passed: writes failed and a row was
 * acknowledged after the last failure, or no write failed within `quietMs` (a fault the load did
 * not notice). A cluster's status may still read healthy just after a fault; this is what tells
 * that the fault has happened.
 */
export async function waitForWritesAfterFault(
  load: AcknowledgedWrites,
  since: number,
  quietMs = 20_000,
): Promise<void> {
  const deadline = Date.now() + 180_000;
  for (;;) {
    const lastFailure = load.failures.filter((t) => t >= since).at(-1);
    if (lastFailure === undefined && Date.now() - since > quietMs) return;
    if (lastFailure !== undefined && load.acked.some((row) => row.at > lastFailure)) return;
    if (Date.now() > deadline) throw new Error('writes were not accepted again within 180 s of the fault');
    await sleep(100);
  }
}

/** Acknowledged ids that `present` lacks. */
export function missingRows(load: AcknowledgedWrites, present: ReadonlySet<number>): number[] {
  return load.acked.filter((row) => !present.has(row.id)).map((row) => row.id);
}
