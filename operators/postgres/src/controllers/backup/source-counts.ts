// The source's side of a drill's comparison (ADR 0221): each database's tables and rows at one WAL
// position L, counted on a streaming standby whose replay is paused (never on the primary, which
// moves with every commit), then the primary's segment switched and archived, so that a restore
// of the archive reaches L. Whatever stops it (no standby to pause, a count past its bound, an
// archive that does not take the segment in time) leaves the drill to run uncompared, saying why:
// it is not the backup's failure.
import type { PostgresCluster } from '../../api/postgres-cluster-types.ts';
import {
  primaryBeforeCount,
  switchAndAwaitArchive,
  type PrimaryBeforeCount,
} from '../../instance/archive-position.ts';
import { errorMessage } from '../../instance/instance.ts';
import { maxLsn, type Lsn } from '../../instance/lsn.ts';
import { countAtPausedReplay, resumeReplay, type DatabaseCounts } from '../../instance/row-counts.ts';
import type { InstanceAccess } from '../instance-access.ts';

/** The source's counts at L, or why there are none. */
export type SourceCounts =
  | {
      readonly compared: true;
      readonly lsn: string;
      readonly standby: string;
      readonly databases: readonly DatabaseCounts[];
    }
  | { readonly compared: false; readonly reason: string };

export interface SourceCountBounds {
  /** The longest a count (catching up, pausing, counting) may take, in ms. */
  readonly countTimeoutMs: number;
  /** The longest the primary may take to archive the segment holding L, in ms. */
  readonly archiveTimeoutMs: number;
}

const notCompared = (reason: string): SourceCounts => ({ compared: false, reason });

/**
 * Counts `cluster`'s databases at one position on one of its standbys, L: past every commit the
 * primary had when the count began, and past `replayedAtLeast`, the restored backup's consistency
 * point (a copy cannot stop before it).
 */
export async function countSource(
  cluster: PostgresCluster,
  access: InstanceAccess | undefined,
  replayedAtLeast: Lsn | undefined,
  bounds: SourceCountBounds,
  signal?: AbortSignal,
  /** Told as each step that may wait begins: a drill that stalls says where in its log. */
  progress: (step: string) => void = () => {},
): Promise<SourceCounts> {
  const status = cluster.status;
  const primary = status?.currentPrimary;
  if (!access) return notCompared("the operator's credentials for the instances are not known yet");
  if (!primary || status?.operation)
    return notCompared('no settled primary (a failover or switchover is under way)');
  const standbys = (status?.instanceStatuses ?? [])
    .filter((i) => i.role === 'replica' && i.ready && i.name !== primary)
    .map((i) => i.name)
    .sort();
  // Only a count pauses a standby: one found paused was left so by a count that never ended.
  for (const name of standbys)
    await resumeReplay(access.endpointOf(name), access.credentials, access.connect).catch(() => false);
  if (standbys.length === 0)
    return notCompared('no streaming standby to count on (a primary is never paused, so it is not counted)');
  let before: PrimaryBeforeCount;
  try {
    before = await primaryBeforeCount(access.endpointOf(primary), access.credentials, access.connect);
  } catch (error) {
    return notCompared(`reading ${primary}'s position and synchronous standbys: ${errorMessage(error)}`);
  }
  // The last by name: a deterministic pick, and with ordinals, rarely the first replica made.
  const standby = standbys.filter((s) => !before.applyWaitsFor.includes(s)).at(-1);
  if (!standby)
    return notCompared(
      `every standby (${standbys.join(', ')}) is one commits wait to be applied on (synchronous_commit = remote_apply): pausing it would hold them`,
    );
  try {
    progress(`counting on standby ${standby}, once it has replayed past ${primary}'s position`);
    const counts = await countAtPausedReplay({
      endpoint: access.endpointOf(standby),
      credentials: access.credentials,
      connect: access.connect,
      // L past every commit acknowledged before the drill, and past the backup's end.
      replayedAtLeast: maxLsn(replayedAtLeast, before.currentLsn) ?? before.currentLsn,
      timeoutMs: bounds.countTimeoutMs,
      ...(signal ? { signal } : {}),
    });
    progress(`counted on ${standby} at ${counts.lsn}; waiting for ${primary} to archive that position`);
    await switchAndAwaitArchive(
      access.endpointOf(primary),
      access.credentials,
      access.connect,
      bounds.archiveTimeoutMs,
    );
    return { compared: true, lsn: counts.lsn, standby, databases: counts.databases };
  } catch (error) {
    return notCompared(`counting on ${standby}: ${errorMessage(error)}`);
  }
}
