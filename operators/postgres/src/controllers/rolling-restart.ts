// The rolling restart of a cluster whose pods run an older spec (image, resources, parameters):
// replicas first, one at a time, each waiting until every instance is ready again; then a
// switchover to an up-to-date replica; then the old primary, which the switchover has already
// stopped and which comes back as a replica with the new spec (ADR 0202). The decision is a pure
// function (each step unit-tested); restartForRollout carries out a restart.
import type { V1Pod } from '@kubernetes/client-node';
import { restartedAtAnnotation, restartRequest } from '@homeostat/operator-kit';
import { builtin, isPodReady, type ReconcileContext } from '@homeostat/reconcile';
import type { PostgresCluster } from '../api/postgres-cluster-types.ts';
import { ordinalOf } from './cluster-names.ts';

export interface RolloutInputs {
  readonly cluster: string;
  /** The instance taking writes now. */
  readonly primary: string;
  /** Every instance pod that exists, by name. */
  readonly pods: ReadonlyMap<string, V1Pod>;
  /** Pods whose spec hash is not the wanted one. */
  readonly restartPending: readonly string[];
  /** Instances the last observation found ready in their role (a replica: streaming). */
  readonly readyInstances: ReadonlySet<string>;
  /** spec.instances. */
  readonly instances: number;
  /** A failover or switchover is in progress, or the first primary is not up yet. */
  readonly busy: boolean;
  /** A failover or switchover is in progress. */
  readonly operation: boolean;
  /** Instances whose postgres container is down after failing (instance-failures.ts). */
  readonly failing: ReadonlySet<string>;
}

export type RolloutStep =
  | { readonly type: 'none'; readonly why: string }
  /** Delete this replica's pod; it is created again with the new spec. */
  | { readonly type: 'restart-replica'; readonly instance: string }
  /** Switch over to this up-to-date replica; the old primary restarts as its replica. */
  | { readonly type: 'switchover'; readonly to: string }
  /** A lone primary: restart it in place (the only restart with downtime). */
  | { readonly type: 'restart-primary'; readonly instance: string }
  /** Delete this failing pod, whatever its role: it serves nothing, and the new spec may fix it. */
  | { readonly type: 'replace-failing'; readonly instance: string };

const podReady = (pod: V1Pod | undefined) => !!pod && isPodReady(pod);

/** The next step of the rolling restart, or `none` with why nothing moves now. */
export function nextRolloutStep(inputs: RolloutInputs): RolloutStep {
  const pending = new Set(inputs.restartPending);
  if (pending.size === 0) return { type: 'none', why: 'every pod runs the wanted spec' };
  // Waiting for every instance to be ready would wait forever on a pod that fails with the very
  // setting the new spec corrects (a first primary that never starts, a replica the rollout broke).
  const failing = [...pending].sort().find((n) => inputs.failing.has(n));
  if (failing && !inputs.operation) return { type: 'replace-failing', instance: failing };
  if (inputs.busy) return { type: 'none', why: 'a failover or switchover is in progress' };
  const names = [...inputs.pods.keys()].sort(
    (a, b) => (ordinalOf(inputs.cluster, a) ?? 0) - (ordinalOf(inputs.cluster, b) ?? 0),
  );
  // One instance down at a time: nothing moves until every instance is back and ready.
  const notReady = names.filter((n) => !podReady(inputs.pods.get(n)) || !inputs.readyInstances.has(n));
  if (names.length < inputs.instances || notReady.length) {
    return { type: 'none', why: `waiting for ${notReady.join(', ') || 'every instance'} to be ready` };
  }
  const replica = names.find((n) => n !== inputs.primary && pending.has(n));
  if (replica) return { type: 'restart-replica', instance: replica };
  if (!pending.has(inputs.primary)) return { type: 'none', why: 'every pod runs the wanted spec' };
  const target = names.find((n) => n !== inputs.primary);
  return target ? { type: 'switchover', to: target } : { type: 'restart-primary', instance: inputs.primary };
}

/**
 * Carries out a restart step: a normal deletion (the preStop hook shuts PostgreSQL down fast and
 * cleanly); the controller creates the pod again with the new spec once it is gone. A switchover
 * step is the failover engine's, through the desired primary.
 */
export async function restartForRollout(
  step: RolloutStep,
  cluster: PostgresCluster,
  pods: ReadonlyMap<string, V1Pod>,
  ctx: ReconcileContext,
): Promise<void> {
  if (step.type === 'none' || step.type === 'switchover') return;
  const namespace = cluster.metadata?.namespace ?? 'default';
  const uid = pods.get(step.instance)?.metadata?.uid ?? '';
  // A refused deletion backs off on its own and is reported with the other refused writes: the
  // rollout waits, probing and failing over do not (ADR 0603).
  const deleted = await ctx.writes.attempt(`deleting Pod ${step.instance} (rolling restart)`, async () => {
    await ctx.client.delete(builtin.pods, step.instance, namespace, { uid });
    return true;
  });
  if (!deleted) return;
  ctx.log.info(
    { rollout: step.type, instance: step.instance },
    `restarting ${step.instance} (rolling restart)`,
  );
  // The first restart of a request: no pod carried it before this one went.
  const requestedAt = restartRequest(cluster);
  if (requestedAt !== undefined && [...pods.values()].every((p) => restartRequest(p) !== requestedAt)) {
    await ctx.events.normal(
      cluster,
      'RestartRequested',
      'Restart',
      `restarting every instance, replicas first, then a switchover and the old primary (${restartedAtAnnotation}=${requestedAt})`,
    );
  }
  await ctx.events.normal(
    cluster,
    'InstanceRestarting',
    'Restart',
    `restarting ${step.instance} to apply the new spec (rolling restart)`,
  );
}
