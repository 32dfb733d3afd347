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
import type { DefaultImages } from './desired-statefulset.ts';
import { MemcachedReconciler } from './memcached-reconciler.ts';
import type { CacheGauges } from '../metrics/cache-gauges.ts';
import { managedObjectsSelector } from './operand-labels.ts';

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
  const pods = manager.cache.informer(builtin.pods, { labelSelector: managedObjectsSelector });
  // Likewise only the ConfigMaps it made (the server lists), never every ConfigMap.
  const configMaps = manager.cache.informer(builtin.configMaps, { labelSelector: managedObjectsSelector });
  return manager.controller({
    name: 'memcached',
    for: memcacheds,
    // Deployments only as an older operator made them, to be deleted once the StatefulSet serves.
    owns: [
      builtin.statefulSets,
      builtin.services,
      builtin.podDisruptionBudgets,
      builtin.networkPolicies,
      builtin.deployments,
    ],
    // Pod readiness feeds the status; pods are owned by the StatefulSet (or an old ReplicaSet), so
    // they map by label.
    watches: [
      watch({
        type: builtin.pods,
        labelSelector: managedObjectsSelector,
        map: mapToLabelledOwner('app.kubernetes.io/instance'),
      }),
      watch({
        type: builtin.configMaps,
        labelSelector: managedObjectsSelector,
        map: mapToLabelledOwner('app.kubernetes.io/instance'),
      }),
    ],
    // A spec change, or a restart request (an annotation: it leaves the generation as it is).
    predicates: [anyOf(generationChanged, annotationChanged(restartedAtAnnotation))],
    maxConcurrentReconciles: options.maxConcurrentReconciles ?? 2,
    reconcile: new MemcachedReconciler(pods, configMaps, {
      defaultImages: options.defaultImages,
      ...(options.gauges ? { gauges: options.gauges } : {}),
    }),
  });
}
