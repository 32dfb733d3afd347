// The status the operator's main field manager writes: what it observed of each instance, the
// phase and the three conditions. The failover fields (currentPrimary, targetPrimary, failingSince,
// operation) and the counts of completed failovers and switchovers are the failover engine's and
// are written elsewhere (failover-status.ts), each count with the save that completes an operation.
import type { V1Pod } from '@kubernetes/client-node';
import { setCondition, type ConditionInput } from '@homeostat/reconcile';
import {
  conditionTypes,
  type InstanceStatusFields,
  type PostgresCluster,
  type PostgresClusterStatusFields,
} from '../api/postgres-cluster-types.ts';
import type { ClusterView } from '../failover/cluster-view.ts';
import type { FailoverState } from '../failover/failover-state.ts';
import { formatLsn } from '../instance/lsn.ts';
import type { ArchivingReport } from './archiving-status.ts';
import { fencedInstancesAnnotation } from '../api/fencing-request.ts';
import { describeFailures, type InstanceFailure } from './instance-failures.ts';
import { instanceSelectorString } from './operand-labels.ts';

export interface ClusterObservation {
  /** The failover engine's state; undefined until a primary has first been seen taking writes. */
  readonly state: FailoverState | undefined;
  /** The instance pods that exist, by name. */
  readonly pods: ReadonlyMap<string, V1Pod>;
  /** Every instance as just observed through SQL (empty when none was probed). */
  readonly view: ClusterView | undefined;
  /** Pods whose spec differs from what the operator wants now (a restart applies it). */
  readonly restartPending: readonly string[];
  /** Why writing the desired objects failed in this reconcile, if it did (refusedWritesProblem). */
  readonly writeError?: { readonly reason: string; readonly message: string };
  /**
   * The timeline a failover or switchover that ended in this reconcile promoted to: the view was
   * taken before the promotion, when the new primary still answered as a standby.
   */
  readonly promotedTimeline?: number;
  /** The failover or switchover refusal the engine reported in this reconcile, if any. */
  readonly refusal?: { readonly kind: 'failover' | 'switchover'; readonly reason: string };
  /** Instances whose postgres container is down after failing, with the cause. */
  readonly failures?: readonly InstanceFailure[];
  /** Before the first primary: why none is chosen yet (retained data being adopted). */
  readonly bootstrapWaiting?: string;
  /** WAL archiving (spec.backup), as the primary's archiver reported it. */
  readonly archiving?: ArchivingReport;
  /** The instances fenced on request (fenced-instances.ts). */
  readonly fenced?: ReadonlySet<string>;
  /** Why the fencing request is not (wholly) followed, when it is not. */
  readonly fencingProblem?: string;
}

type Phase = NonNullable<PostgresClusterStatusFields['phase']>;

function instanceStatuses(cluster: PostgresCluster, observed: ClusterObservation): InstanceStatusFields[] {
  const names = new Set([
    ...observed.pods.keys(),
    ...(observed.view?.instances.map((i) => i.status.name) ?? []),
  ]);
  const fenced = new Set(observed.state?.operation?.fenced ?? []);
  return [...names].sort().map((name) => {
    // Stopped on purpose, whatever a probe caught while it was stopping.
    if (observed.fenced?.has(name)) return { name, role: 'fenced', ready: false, fenced: true };
    const view = observed.view?.instances.find((i) => i.status.name === name);
    const status = view?.status;
    if (!status?.reachable) {
      return { name, role: fenced.has(name) ? 'fenced' : 'unknown', ready: false };
    }
    const lsn = status.role === 'primary' ? status.currentLsn : status.replayLsn;
    const streaming = status.role === 'replica' && status.walReceiver?.status === 'streaming';
    return {
      name,
      role: fenced.has(name) ? 'fenced' : status.role,
      // A primary is ready when it is the one writes go to and it takes them.
      ready:
        status.role === 'primary'
          ? name === (observed.state?.currentPrimary ?? name) && !status.readOnly
          : streaming,
      timeline: status.timeline,
      ...(lsn === undefined ? {} : { lsn: formatLsn(lsn) }),
      ...(view?.lagBytes === undefined ? {} : { lagBytes: Number(view.lagBytes) }),
      ...(view?.slotRetainedBytes === undefined ? {} : { slotRetainedBytes: Number(view.slotRetainedBytes) }),
      ...(status.formerDataKeptAside ? { formerDataKeptAside: true } : {}),
    };
  });
}

/** Instances whose former primary data was set aside since `previous` was written. */
export function newlyKeptAside(
  previous: readonly InstanceStatusFields[] | undefined,
  next: readonly InstanceStatusFields[],
): string[] {
  const before = new Set(previous?.filter((i) => i.formerDataKeptAside).map((i) => i.name));
  return next.filter((i) => i.formerDataKeptAside && !before.has(i.name)).map((i) => i.name);
}

function phaseOf(
  cluster: PostgresCluster,
  observed: ClusterObservation,
  ready: number,
  primaryUp: boolean,
): Phase {
  const operation = observed.state?.operation;
  if (operation) return operation.kind === 'failover' ? 'FailingOver' : 'SwitchingOver';
  if (!observed.state) return observed.failures?.length ? 'Degraded' : 'Creating';
  if (!primaryUp) return 'Unavailable';
  if (observed.pods.size !== cluster.spec.instances) return 'Scaling';
  if (ready < cluster.spec.instances || observed.writeError || observed.refusal) return 'Degraded';
  return 'Healthy';
}

function available(observed: ClusterObservation, primaryUp: boolean, readOnly: boolean): ConditionInput {
  const type = conditionTypes.available;
  const primary = observed.state?.currentPrimary;
  if (primaryUp && primary) {
    return {
      type,
      status: 'True',
      reason: 'PrimaryAvailable',
      message: `${primary} takes writes through the -rw Service`,
    };
  }
  if (!observed.state) {
    return {
      type,
      status: 'False',
      reason: 'Bootstrapping',
      message: observed.bootstrapWaiting ?? 'the first primary is not up yet',
    };
  }
  if (observed.state.operation) {
    return {
      type,
      status: 'False',
      reason: observed.state.operation.kind === 'failover' ? 'FailingOver' : 'SwitchingOver',
      message: `${observed.state.operation.kind} in progress: ${observed.state.operation.reason}`,
    };
  }
  if (primary && observed.fenced?.has(primary)) {
    return {
      type,
      status: 'False',
      reason: 'PrimaryFenced',
      message: `the primary ${primary} is fenced on request (${fencedInstancesAnnotation}): no writes, and no failover, until it is unfenced`,
    };
  }
  if (readOnly) {
    return {
      type,
      status: 'False',
      reason: 'PrimaryReadOnly',
      message: `the primary ${primary ?? ''} refuses writes (default_transaction_read_only is on, left by a switchover that did not happen); the operator gives writes back`,
    };
  }
  return {
    type,
    status: 'False',
    reason: 'PrimaryUnavailable',
    message: `the primary ${primary ?? ''} does not take writes`,
  };
}

function progressing(cluster: PostgresCluster, observed: ClusterObservation): ConditionInput {
  const type = conditionTypes.progressing;
  const operation = observed.state?.operation;
  if (operation) {
    return {
      type,
      status: 'True',
      reason: operation.kind === 'failover' ? 'FailingOver' : 'SwitchingOver',
      message: `${operation.kind} at step ${operation.step}: ${operation.reason}`,
    };
  }
  if (!observed.state)
    return { type, status: 'True', reason: 'Creating', message: 'bootstrapping the first primary' };
  const want = cluster.spec.instances;
  const have = observed.pods.size;
  if (have < want)
    return { type, status: 'True', reason: 'ScalingUp', message: `${have} instances, scaling up to ${want}` };
  if (have > want)
    return {
      type,
      status: 'True',
      reason: 'ScalingDown',
      message: `${have} instances, scaling down to ${want}`,
    };
  if (observed.restartPending.length) {
    return {
      type,
      status: 'True',
      reason: 'RestartPending',
      message: `${observed.restartPending.join(', ')} run an older spec and need a restart`,
    };
  }
  return { type, status: 'False', reason: 'Complete', message: `all ${want} instances are as specified` };
}

function degraded(cluster: PostgresCluster, observed: ClusterObservation, ready: number): ConditionInput {
  const type = conditionTypes.degraded;
  if (observed.writeError)
    return { type, status: 'True', reason: observed.writeError.reason, message: observed.writeError.message };
  if (observed.refusal) {
    return {
      type,
      status: 'True',
      reason: observed.refusal.kind === 'failover' ? 'FailoverRefused' : 'SwitchoverRefused',
      message: observed.refusal.reason,
    };
  }
  if (observed.failures?.length) {
    return { type, status: 'True', reason: 'InstanceFailing', message: describeFailures(observed.failures) };
  }
  if (observed.fencingProblem) {
    return { type, status: 'True', reason: 'FencingRequestInvalid', message: observed.fencingProblem };
  }
  if (observed.fenced?.size) {
    return {
      type,
      status: 'True',
      reason: 'InstancesFenced',
      message: `fenced on request: ${[...observed.fenced].sort().join(', ')}; ${ready} of ${cluster.spec.instances} instances ready`,
    };
  }
  if (observed.state && ready < cluster.spec.instances) {
    return {
      type,
      status: 'True',
      reason: 'InstancesNotReady',
      message: `${ready} of ${cluster.spec.instances} instances ready`,
    };
  }
  return { type, status: 'False', reason: 'AsExpected', message: '' };
}

/** The status to write from what this reconcile observed and did. */
export function clusterStatus(
  cluster: PostgresCluster,
  observed: ClusterObservation,
  now = new Date(),
): PostgresClusterStatusFields {
  const generation = cluster.metadata?.generation;
  const instances = instanceStatuses(cluster, observed);
  const ready = instances.filter((i) => i.ready).length;
  const primaryName = observed.state?.currentPrimary;
  const primary = observed.view?.instances.find((i) => i.status.name === primaryName)?.status;
  // A read-only primary is up but takes no write: the cluster is not available for writes.
  const readOnly = Boolean(primary?.reachable && primary.role === 'primary' && primary.readOnly);
  const primaryUp = Boolean(
    primary?.reachable && primary.role === 'primary' && !readOnly && !observed.state?.operation,
  );
  // BackupVerified is the restore drill controller's, under its own field manager: carrying it
  // here would make this writer co-own it and put back a value the drill has since changed.
  let conditions = cluster.status?.conditions?.filter((c) => c.type !== conditionTypes.backupVerified);
  for (const condition of [
    available(observed, primaryUp, readOnly),
    progressing(cluster, observed),
    degraded(cluster, observed, ready),
  ]) {
    conditions = setCondition(conditions, condition, generation, now);
  }
  if (observed.archiving?.condition) {
    conditions = setCondition(conditions, observed.archiving.condition, generation, now);
  } else if (!cluster.spec.backup) {
    // Archiving turned off: its condition goes with it rather than staying stale.
    conditions = conditions?.filter((c) => c.type !== conditionTypes.continuousArchiving);
  }
  const backup = cluster.spec.backup ? (observed.archiving?.backup ?? cluster.status?.backup) : undefined;
  const previous = cluster.status;
  // Only a primary's own answer gives the timeline; a standby's is the one it streams from.
  const timeline =
    primary?.reachable && primary.role === 'primary'
      ? primary.timeline
      : (observed.promotedTimeline ?? previous?.timeline);
  return {
    ...(generation === undefined ? {} : { observedGeneration: generation }),
    phase: phaseOf(cluster, observed, ready, primaryUp),
    instances: observed.pods.size,
    readyInstances: ready,
    ...(timeline === undefined ? {} : { timeline }),
    instanceStatuses: instances,
    selector: instanceSelectorString(cluster.metadata?.name ?? ''),
    ...(backup ? { backup } : {}),
    conditions: conditions ?? [],
  };
}
