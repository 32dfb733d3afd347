// The failover engine's state, kept in the PostgreSQLCluster's status (currentPrimary,
// targetPrimary, failingSince, operation) and written by a field manager of its own: the rest of
// the status is applied by the operator's main field manager, and server-side apply would drop
// from one manager's write whatever that manager owns and leaves out.
import type { KubeClient } from '@homeostat/reconcile';
import type { CommitQuorumRecord } from '../failover/commit-quorums.ts';
import type { FailoverState, FailoverStateStore, Operation } from '../failover/failover-state.ts';
import { formatLsn, parseLsn } from '../instance/lsn.ts';
import {
  postgresClusters,
  type PostgresCluster,
  type PostgresClusterStatusFields,
} from '../api/postgres-cluster-types.ts';

/** The field manager of the failover fields of the status. */
export const failoverFieldManager = 'postgres-operator-failover';

type FailoverStatusFields = Pick<
  PostgresClusterStatusFields,
  | 'currentPrimary'
  | 'targetPrimary'
  | 'failingSince'
  | 'operation'
  | 'commitQuorums'
  | 'failovers'
  | 'switchovers'
>;

/** How many failovers and switchovers completed: written with the save that completes one. */
export interface OperationCounts {
  readonly failovers: number;
  readonly switchovers: number;
}

/** The counts the status holds (0 when absent). */
export function countsFromStatus(cluster: PostgresCluster): OperationCounts {
  return { failovers: cluster.status?.failovers ?? 0, switchovers: cluster.status?.switchovers ?? 0 };
}

const time = (ms: number) => new Date(ms).toISOString();

/** The engine's state as the status holds it, or undefined before the first primary was ever seen. */
export function stateFromStatus(cluster: PostgresCluster): FailoverState | undefined {
  const status = cluster.status;
  if (!status?.currentPrimary) return undefined;
  const op = status.operation;
  const operation: Operation | undefined = op && {
    kind: op.kind,
    step: op.step,
    reason: op.reason,
    startedAt: Date.parse(op.startedAt),
    stepStartedAt: Date.parse(op.stepStartedAt),
    fenced: op.fenced,
    ...(op.referenceLsn ? { referenceLsn: parseLsn(op.referenceLsn) } : {}),
    ...(op.quiescedLsn ? { quiescedLsn: parseLsn(op.quiescedLsn) } : {}),
    ...(op.deadline ? { deadline: Date.parse(op.deadline) } : {}),
    ...(op.promoteWith !== undefined ? { promoteWith: op.promoteWith } : {}),
  };
  const quorums = status.commitQuorums;
  const commitQuorums: CommitQuorumRecord | undefined = quorums && {
    quorums: quorums.lists.map((q) => ({ number: q.number, standbys: [...q.standbys] })),
    ...(quorums.running
      ? {
          running: {
            quorum: { number: quorums.running.number, standbys: [...quorums.running.standbys] },
            seenAt: Date.parse(quorums.running.seenAt),
            ...(quorums.running.fromLsn ? { fromLsn: parseLsn(quorums.running.fromLsn) } : {}),
          },
        }
      : {}),
  };
  return {
    currentPrimary: status.currentPrimary,
    targetPrimary: status.targetPrimary ?? status.currentPrimary,
    ...(status.failingSince ? { failingSince: Date.parse(status.failingSince) } : {}),
    ...(operation ? { operation } : {}),
    ...(commitQuorums ? { commitQuorums } : {}),
  };
}

/** The status fields that hold `state` and the counts. */
export function statusFromState(state: FailoverState, counts: OperationCounts): FailoverStatusFields {
  const op = state.operation;
  const quorums = state.commitQuorums;
  return {
    failovers: counts.failovers,
    switchovers: counts.switchovers,
    currentPrimary: state.currentPrimary,
    targetPrimary: state.targetPrimary,
    ...(state.failingSince === undefined ? {} : { failingSince: time(state.failingSince) }),
    ...(op
      ? {
          operation: {
            kind: op.kind,
            step: op.step,
            reason: op.reason,
            startedAt: time(op.startedAt),
            stepStartedAt: time(op.stepStartedAt),
            fenced: [...op.fenced],
            ...(op.referenceLsn === undefined ? {} : { referenceLsn: formatLsn(op.referenceLsn) }),
            ...(op.quiescedLsn === undefined ? {} : { quiescedLsn: formatLsn(op.quiescedLsn) }),
            ...(op.deadline === undefined ? {} : { deadline: time(op.deadline) }),
            ...(op.promoteWith === undefined ? {} : { promoteWith: op.promoteWith }),
          },
        }
      : {}),
    ...(quorums
      ? {
          commitQuorums: {
            lists: quorums.quorums.map((q) => ({ number: q.number, standbys: [...q.standbys] })),
            ...(quorums.running
              ? {
                  running: {
                    number: quorums.running.quorum.number,
                    standbys: [...quorums.running.quorum.standbys],
                    seenAt: time(quorums.running.seenAt),
                    ...(quorums.running.fromLsn === undefined
                      ? {}
                      : { fromLsn: formatLsn(quorums.running.fromLsn) }),
                  },
                }
              : {}),
          },
        }
      : {}),
  };
}

/**
 * A store on the cluster's status. `load` reads the API server, not a cache that may not have seen
 * the last save yet; `save` resolves once the API server has the state. `client` must write as
 * `failoverFieldManager`, which owns the counts of completed operations too: every save carries
 * them (server-side apply drops a field its manager leaves out), the one completing an operation
 * one more. `counts`: as the cluster read at the start of this reconcile holds them.
 */
export function statusStore(
  client: KubeClient,
  /** The cluster; with its uid, a save never lands on another cluster made since under its name. */
  key: { namespace: string; name: string; uid?: string | undefined },
  initial: FailoverState,
  counts: OperationCounts,
): FailoverStateStore {
  let known = counts;
  return {
    async load() {
      const cluster = await client.get(postgresClusters, key.name, key.namespace);
      known = countsFromStatus(cluster);
      return stateFromStatus(cluster) ?? initial;
    },
    async save(state, completed) {
      const next = {
        failovers: known.failovers + (completed === 'failover' ? 1 : 0),
        switchovers: known.switchovers + (completed === 'switchover' ? 1 : 0),
      };
      await client.applyStatus(postgresClusters, {
        metadata: { name: key.name, namespace: key.namespace, uid: key.uid },
        status: statusFromState(state, next),
      });
      known = next;
    },
  };
}
