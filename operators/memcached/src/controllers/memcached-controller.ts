// The Memcached controller: what it watches and caches, around the MemcachedReconciler.
import { restartedAtAnnotation } from '@homeostat/operator-kit';
import {
  annotationChanged,
  anyOf,
  builtin,
  generationChanged,
  mapToLabelledOwner,
  watch,
  type Controller,
  type Manager,
} from '@homeostat/reconcile';
import { memcacheds, type Memcached } from '../api/memcached-types.ts';
import type { DefaultImages } from './desired-deployment.ts';
import { MemcachedReconciler } from './memcached-reconciler.ts';
import type { CacheGauges } from '../metrics/cache-gauges.ts';
import { managedPodsSelector } from './operand-labels.ts';

export interface MemcachedControllerOptions {
  /** Images for Memcacheds that do not name them. */
  defaultImages: DefaultImages;
  maxConcurrentReconciles?: number;
  /** The operator's per-Memcached gauges. */
  gauges?: CacheGauges;
}

/** Adds the Memcached controller to `manager`. */
export function addMemcachedController(
  manager: Manager,
  options: MemcachedControllerOptions,
): Controller<Memcached> {
  // Only this operator's pods are cached (the label-selected informer the pod watch below shares),
  // never every pod in the cluster.
  const pods = manager.cache.informer(builtin.pods, { labelSelector: managedPodsSelector });
  return manager.controller({
    name: 'memcached',
    for: memcacheds,
    owns: [builtin.deployments, builtin.services, builtin.podDisruptionBudgets, builtin.networkPolicies],
    // Pod readiness feeds the status; pods are owned by ReplicaSets, so they map by label.
    watches: [
      watch({
        type: builtin.pods,
        labelSelector: managedPodsSelector,
        map: mapToLabelledOwner('app.kubernetes.io/instance'),
      }),
    ],
    // A spec change, or a restart request (an annotation: it leaves the generation as it is).
    predicates: [anyOf(generationChanged, annotationChanged(restartedAtAnnotation))],
    maxConcurrentReconciles: options.maxConcurrentReconciles ?? 2,
    reconcile: new MemcachedReconciler(pods, {
      defaultImages: options.defaultImages,
      ...(options.gauges ? { gauges: options.gauges } : {}),
    }),
  });
}
