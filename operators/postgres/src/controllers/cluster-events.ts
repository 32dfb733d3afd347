// The Kubernetes Events a PostgreSQLCluster's reconcile records: the failover engine's own events,
// the outcome of a failover or switchover, an instance newly failing, data kept aside by a rejoin.
// Each is said once while it lasts: the status carries it meanwhile.
import { findCondition, type ReconcileContext } from '@homeostat/reconcile';
import {
  conditionTypes,
  type PostgresCluster,
  type PostgresClusterStatusFields,
} from '../api/postgres-cluster-types.ts';
import type { EngineEvent } from '../failover/outcomes.ts';
import { newlyKeptAside } from './cluster-status.ts';
import type { FailoverRunResult } from './run-failover.ts';

/** Engine events worth a Kubernetes Event on the cluster: reason, type. */
const eventReasons: Partial<Record<EngineEvent['type'], [string, 'Normal' | 'Warning']>> = {
  'failover-started': ['FailoverStarted', 'Warning'],
  'switchover-started': ['SwitchoverStarted', 'Normal'],
  fenced: ['Fenced', 'Normal'],
  promoted: ['Promoted', 'Normal'],
  reinstating: ['Reinstating', 'Warning'],
  routed: ['Routed', 'Normal'],
  'rejoin-requested': ['Rejoining', 'Normal'],
  'slots-dropped': ['ReplicationSlotsDropped', 'Normal'],
  'slots-created': ['ReplicationSlotsCreated', 'Normal'],
  'writes-restored': ['WritesRestored', 'Normal'],
  'still-read-only': ['PrimaryStillReadOnly', 'Warning'],
};

/** One Kubernetes Event per engine event that has a reason above. */
export async function recordEngineEvents(
  cluster: PostgresCluster,
  events: readonly EngineEvent[],
  ctx: ReconcileContext,
): Promise<void> {
  for (const event of events) {
    const reason = eventReasons[event.type];
    if (!reason) continue;
    const [why, type] = reason;
    const action = why.replace(/Started$|Completed$/, '');
    if (type === 'Warning') await ctx.events.warning(cluster, why, action, event.message);
    else await ctx.events.normal(cluster, why, action, event.message);
  }
}

/** The Event for how a failover or switchover ended in this turn, if one did. */
export async function recordEngineOutcome(
  cluster: PostgresCluster,
  outcome: FailoverRunResult['outcome'],
  ctx: ReconcileContext,
): Promise<void> {
  if (outcome?.outcome === 'promoted') {
    const failover = outcome.kind === 'failover';
    await ctx.events.normal(
      cluster,
      failover ? 'FailoverCompleted' : 'SwitchoverCompleted',
      failover ? 'Failover' : 'Switchover',
      `${outcome.newPrimary} is primary (timeline ${outcome.timeline ?? '?'}), replacing ${outcome.oldPrimary}, in ${outcome.durationMs} ms`,
    );
  } else if (outcome?.outcome === 'reinstated') {
    await ctx.events.normal(
      cluster,
      'PrimaryReinstated',
      'Failover',
      `${outcome.primary} is primary again (timeline ${outcome.timeline ?? '?'}) after ${outcome.durationMs} ms: no replica could replace it`,
    );
  } else if (outcome?.outcome === 'refused') {
    // Once per distinct refusal: the condition carries it while it lasts.
    const degraded = findCondition(cluster.status?.conditions, conditionTypes.degraded);
    if (degraded?.message === outcome.reason) return;
    const failover = outcome.kind === 'failover';
    await ctx.events.warning(
      cluster,
      failover ? 'FailoverRefused' : 'SwitchoverRefused',
      failover ? 'Failover' : 'Switchover',
      outcome.reason,
    );
  }
}

/**
 * Warnings the new status calls for: an instance Degraded names as failing that it did not name
 * before, and each former primary's data newly kept aside by a re-clone.
 */
export async function recordStatusWarnings(
  cluster: PostgresCluster,
  status: PostgresClusterStatusFields,
  ctx: ReconcileContext,
): Promise<void> {
  const now = findCondition(status.conditions, conditionTypes.degraded);
  const before = findCondition(cluster.status?.conditions, conditionTypes.degraded);
  if (now?.reason === 'InstanceFailing' && (before?.reason !== now.reason || before.message !== now.message))
    await ctx.events.warning(cluster, 'InstanceFailing', 'Observe', now.message);
  // Once per set-aside copy: the status field carries it while it lasts.
  for (const instance of newlyKeptAside(cluster.status?.instanceStatuses, status.instanceStatuses ?? [])) {
    await ctx.events.warning(
      cluster,
      'FormerPrimaryDataKept',
      'Rejoin',
      `${instance} was re-cloned because pg_rewind could not bring back its data as a former primary; that data is kept on its volume (pgdata.before-clone) and may hold commits the primary lacks: recover them from it, then delete it to free the space`,
    );
  }
}
