// The EtcdCluster controller: what it watches and caches, around the EtcdClusterReconciler
// (etcd-cluster-reconciler.ts), which does the work.
import { restartedAtAnnotation } from '@homeostat/operator-kit';
import {
  annotationChanged,
  anyOf,
  generationChanged,
  mapToLabelledOwner,
  watch,
  type Controller,
  type Manager,
} from '@homeostat/reconcile';
import { etcdBackups } from '../api/etcd-backup-types.ts';
import { etcdClusters, type EtcdCluster } from '../api/etcd-cluster-types.ts';
import { managedSelector } from './cluster-names.ts';
import { EtcdClusterReconciler, type EtcdClusterReconcilerOptions } from './etcd-cluster-reconciler.ts';
import { OwnedObjects, ownedKinds } from './owned-objects.ts';

export interface EtcdClusterControllerOptions extends EtcdClusterReconcilerOptions {
  readonly maxConcurrentReconciles?: number;
}

/** Adds the EtcdCluster controller to `manager`. */
export function addEtcdClusterController(
  manager: Manager,
  options: EtcdClusterControllerOptions,
): Controller<EtcdCluster> {
  const owned = new OwnedObjects(manager);
  // The backup-age gauge and disaster recovery (the newest good backup) read the EtcdBackups.
  const backups = manager.cache.informer(etcdBackups).store;
  return manager.controller({
    name: 'etcdcluster',
    for: etcdClusters,
    // Everything the operator makes carries its label; a change to any of it wakes the cluster.
    watches: ownedKinds.map((type) =>
      watch({ type, labelSelector: managedSelector, map: mapToLabelledOwner('app.kubernetes.io/instance') }),
    ),
    // A spec change, or a restart request (an annotation: it leaves the generation as it is).
    predicates: [anyOf(generationChanged, annotationChanged(restartedAtAnnotation))],
    maxConcurrentReconciles: options.maxConcurrentReconciles ?? 2,
    reconcile: new EtcdClusterReconciler(owned, backups, options),
  });
}
