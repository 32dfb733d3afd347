// The Memcached reconciler: Deployment + headless Service (+ PodDisruptionBudget) by server-side
// apply, status from the Deployment and its pods, Events on scaling and on failures. A refused
// write backs off on its own (ctx.writes, ADR 0603); it is reported, not thrown.
import type { V1Deployment, V1Pod } from '@kubernetes/client-node';
import {
  WriteFailure,
  assertOwnedOrAbsent,
  builtin,
  generationChanged,
  isBeingDeleted,
  mapToLabelledOwner,
  isControlledBy,
  watch,
  type Controller,
  type Manager,
  type ReconcileContext,
} from '@homeostat/reconcile';
import { memcacheds, type Memcached } from '../api/memcached-types.ts';
import { desiredDeployment } from './desired-deployment.ts';
import { desiredPodDisruptionBudget } from './desired-pdb.ts';
import { desiredService } from './desired-service.ts';
import { memcachedStatus } from './memcached-status.ts';
import { managedPodsSelector } from './operand-labels.ts';

export interface MemcachedControllerOptions {
  /** Image for Memcacheds that do not name one. */
  defaultImage: string;
  maxConcurrentReconciles?: number;
}

async function converge(
  memcached: Memcached,
  ctx: ReconcileContext,
  image: string,
): Promise<V1Deployment | undefined> {
  const name = memcached.metadata?.name ?? '';
  const namespace = memcached.metadata?.namespace ?? 'default';
  const { cache, client, events, writes } = ctx;

  const deployment = desiredDeployment(memcached, image);
  const currentDeployment = cache.get(builtin.deployments, name, namespace);
  assertOwnedOrAbsent(currentDeployment, memcached, 'Deployment');
  const applied = await writes.step(`applying Deployment ${name}`, () =>
    client.applyIfChanged(builtin.deployments, deployment, currentDeployment),
  );
  if (applied.written) {
    const before = currentDeployment?.spec?.replicas;
    if (before === undefined) {
      await events.normal(
        memcached,
        'DeploymentCreated',
        'Create',
        `created Deployment ${name} with ${memcached.spec.size} pods`,
      );
    } else if (before !== memcached.spec.size) {
      await events.normal(
        memcached,
        memcached.spec.size > before ? 'ScaledUp' : 'ScaledDown',
        'Scale',
        `scaled from ${before} to ${memcached.spec.size} pods`,
      );
    } else {
      await events.normal(memcached, 'DeploymentUpdated', 'Update', `updated Deployment ${name}`);
    }
  }

  const service = desiredService(memcached);
  const currentService = cache.get(builtin.services, name, namespace);
  assertOwnedOrAbsent(currentService, memcached, 'Service');
  await writes.step(`applying Service ${name}`, () =>
    client.applyIfChanged(builtin.services, service, currentService),
  );

  const pdb = desiredPodDisruptionBudget(memcached);
  const currentPdb = cache.get(builtin.podDisruptionBudgets, name, namespace);
  if (pdb) {
    assertOwnedOrAbsent(currentPdb, memcached, 'PodDisruptionBudget');
    await writes.step(`applying PodDisruptionBudget ${name}`, () =>
      client.applyIfChanged(builtin.podDisruptionBudgets, pdb, currentPdb),
    );
  } else if (currentPdb && isControlledBy(currentPdb, memcached)) {
    await writes.step(`deleting PodDisruptionBudget ${name}`, () =>
      client.delete(builtin.podDisruptionBudgets, name, namespace, { uid: currentPdb.metadata?.uid ?? '' }),
    );
    await events.normal(
      memcached,
      'PodDisruptionBudgetDeleted',
      'Delete',
      `deleted PodDisruptionBudget ${name}: it is disabled or size is ${memcached.spec.size}`,
    );
  }
  return applied.object;
}

/** Adds the Memcached controller to `manager`. */
export function addMemcachedController(
  manager: Manager,
  options: MemcachedControllerOptions,
): Controller<Memcached> {
  // Only this operator's pods are cached (the label-selected informer the pod watch below shares),
  // never every pod in the cluster.
  const pods = manager.cache.informer(builtin.pods, { labelSelector: managedPodsSelector });
  const podsOf = (memcached: Memcached): V1Pod[] =>
    pods.store
      .byIndex('namespace', memcached.metadata?.namespace ?? 'default')
      .filter((p) => p.metadata?.labels?.['app.kubernetes.io/instance'] === memcached.metadata?.name);

  return manager.controller({
    name: 'memcached',
    for: memcacheds,
    owns: [builtin.deployments, builtin.services, builtin.podDisruptionBudgets],
    // Pod readiness feeds the status; pods are owned by ReplicaSets, so they map by label.
    watches: [
      watch({
        type: builtin.pods,
        labelSelector: managedPodsSelector,
        map: mapToLabelledOwner('app.kubernetes.io/instance'),
      }),
    ],
    predicates: [generationChanged],
    maxConcurrentReconciles: options.maxConcurrentReconciles ?? 2,
    async reconcile({ namespace = 'default', name, object: memcached }, ctx) {
      // Deleted or being deleted: garbage collection removes what it owns (ownerReferences).
      if (!memcached || isBeingDeleted(memcached)) return;

      let deployment: V1Deployment | undefined;
      let failure: WriteFailure | undefined;
      try {
        deployment = await converge(memcached, ctx, options.defaultImage);
      } catch (error) {
        if (!(error instanceof WriteFailure)) throw error;
        failure = error;
        deployment = ctx.cache.get(builtin.deployments, name, namespace);
        // None while the write waits out its backoff: the status still says it.
        if (!error.repeated) await ctx.events.warning(memcached, error.reason, 'Reconcile', error.message);
      }

      const status = memcachedStatus(memcached, {
        deployment,
        pods: podsOf(memcached),
        ...(failure ? { writeError: { reason: failure.reason, message: failure.message } } : {}),
      });
      await ctx.client.applyStatusIfChanged(memcacheds, { metadata: { name, namespace }, status }, memcached);
      // A refused write comes back when its own backoff ends (the controller requeues it); a name
      // someone else holds made no request, so the key backs off until it is freed.
      if (failure && ctx.writes.failures.length === 0) throw failure;
      return undefined;
    },
  });
}
