import type { Lsn } from '../instance/lsn.ts';
import type { InstanceStatus, PrimaryStatus } from '../instance/observe.ts';
import { slotName } from '../instance/slots.ts';

/** One instance as the cluster sees it: its own status plus what only its primary knows. */
export interface InstanceView {
  readonly status: InstanceStatus;
  /** Bytes of WAL the primary has that this replica has not replayed; undefined without a primary. */
  readonly lagBytes: Lsn | undefined;
  /** The primary's pg_stat_replication view of it: state (streaming, catchup) and sync_state. */
  readonly replication: { readonly state: string; readonly syncState: string } | undefined;
  /** Bytes of WAL its replication slot keeps on the primary; undefined without a primary or slot. */
  readonly slotRetainedBytes?: Lsn;
}

export interface ClusterView {
  /** The instances accepting writes; more than one would be a split brain. */
  readonly primaries: readonly string[];
  readonly instances: readonly InstanceView[];
}

/** Joins per-instance statuses into the cluster picture (lag and synchronous state per replica). */
export function clusterView(statuses: readonly InstanceStatus[]): ClusterView {
  const primaries = statuses.filter((s): s is PrimaryStatus => s.reachable && s.role === 'primary');
  const primary = primaries.length === 1 ? primaries[0] : undefined;
  return {
    primaries: primaries.map((p) => p.name),
    instances: statuses.map((status) => {
      if (!primary || !status.reachable || status.role !== 'replica') {
        return {
          status,
          lagBytes: status.reachable && status.role === 'primary' ? 0n : undefined,
          replication: undefined,
        };
      }
      const row = primary.standbys.find((s) => s.applicationName === status.name);
      const replayed = status.replayLsn;
      const retained = primary.slots?.find((s) => s.name === slotName(status.name))?.retainedBytes;
      return {
        status,
        ...(retained === undefined ? {} : { slotRetainedBytes: retained }),
        lagBytes:
          replayed === undefined
            ? undefined
            : primary.currentLsn > replayed
              ? primary.currentLsn - replayed
              : 0n,
        replication: row ? { state: row.state, syncState: row.syncState } : undefined,
      };
    }),
  };
}
