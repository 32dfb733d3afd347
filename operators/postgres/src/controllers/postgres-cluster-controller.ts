// The PostgreSQLCluster controller: what it watches, around the PostgresClusterReconciler. Its own
// status writes do not wake it (it probes on a timer instead).
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
import { fencedInstancesAnnotation } from '../api/fencing-request.ts';
import { postgresClusters, type PostgresCluster } from '../api/postgres-cluster-types.ts';
import { labelKeys, managedSelector } from './operand-labels.ts';
import {
  PostgresClusterReconciler,
  type PostgresClusterReconcilerOptions,
} from './postgres-cluster-reconciler.ts';

export interface PostgresClusterControllerOptions extends PostgresClusterReconcilerOptions {
  readonly maxConcurrentReconciles?: number;
}

const clusterOf = mapToLabelledOwner(labelKeys.cluster);

/** Adds the PostgreSQLCluster controller to `manager`. */
export function addPostgresClusterController(
  manager: Manager,
  options: PostgresClusterControllerOptions,
): Controller<PostgresCluster> {
  return manager.controller({
    name: 'postgresqlcluster',
    for: postgresClusters,
    owns: [builtin.services, builtin.podDisruptionBudgets],
    watches: [
      watch({ type: builtin.pods, labelSelector: managedSelector, map: clusterOf }),
      watch({ type: builtin.persistentVolumeClaims, labelSelector: managedSelector, map: clusterOf }),
      watch({ type: builtin.secrets, labelSelector: managedSelector, map: clusterOf }),
    ],
    // A spec change, a restart request or a fencing request (annotations: they leave the generation as it is).
    predicates: [
      anyOf(
        generationChanged,
        annotationChanged(restartedAtAnnotation),
        annotationChanged(fencedInstancesAnnotation),
      ),
    ],
    maxConcurrentReconciles: options.maxConcurrentReconciles ?? 2,
    reconcile: new PostgresClusterReconciler(manager, options),
  });
}
