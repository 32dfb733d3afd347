// Labels and metadata on everything the operator creates for one PostgreSQLCluster.
import { controllerReference } from '@homeostat/reconcile';
import type { PostgresCluster } from '../api/postgres-cluster-types.ts';

/** The field manager, event reporter and `app.kubernetes.io/managed-by` value of this operator. */
export const operatorName = 'postgres-operator';

/**
 * The field manager of the routing label alone, so that moving it (fencing, promotion) never
 * touches the rest of a pod, and applying a pod never moves it (ADR 0202).
 */
export const routingFieldManager = 'postgres-operator-routing';

/** Label keys this operator sets. */
export const labelKeys = {
  cluster: 'postgres.homeostat.dev/cluster',
  instance: 'postgres.homeostat.dev/instance',
  /** `primary` or `replica`: what the -rw and -ro Services select. Absent on a fenced instance. */
  role: 'postgres.homeostat.dev/role',
  /**
   * `true` beside either role, removed with it: what the -r Service selects (a Service selector
   * matches values only, so "has a role" needs a label of its own). Absent on a fenced instance.
   */
  routed: 'postgres.homeostat.dev/routed',
} as const;

/** Annotation keys this operator sets. */
export const annotationKeys = {
  /** The role the entrypoint starts the instance in (read through the downward API at each start). */
  instanceRole: 'postgres.homeostat.dev/instance-role',
  /** A hash of the pod spec the operator wants: a pod whose hash differs needs a restart. */
  specHash: 'postgres.homeostat.dev/spec-hash',
  /**
   * `true` on the pod of an instance fenced on request: the pod's containers read it through the
   * downward API; PostgreSQL is stopped and stays stopped while it is there (ADR 0223).
   */
  fenced: 'postgres.homeostat.dev/fenced',
  /**
   * When the instance was last unfenced (RFC 3339): an unfenced primary has a moment to start
   * again before its silence counts as a failure (unfenceGraceMs).
   */
  unfencedAt: 'postgres.homeostat.dev/unfencedAt',
} as const;

/** Labels that pick every instance of one cluster (the selector of -r, the headless Service, the PDBs). */
export function clusterSelector(cluster: string): Record<string, string> {
  return { [labelKeys.cluster]: cluster };
}

/** Labels on everything made for `cluster`: who made it, for what. */
export function operandLabels(cluster: string, component = 'database'): Record<string, string> {
  return {
    'app.kubernetes.io/name': 'postgresql',
    'app.kubernetes.io/instance': cluster,
    'app.kubernetes.io/component': component,
    'app.kubernetes.io/part-of': 'homeostat',
    'app.kubernetes.io/managed-by': operatorName,
    ...clusterSelector(cluster),
  };
}

/** Label selector of the operator's informers: only what it made. */
export const managedSelector = `app.kubernetes.io/managed-by=${operatorName},${labelKeys.cluster}`;

/** The selector string of a cluster's instance pods, as the scale subresource and `kubectl get -l` take it. */
export function instanceSelectorString(cluster: string): string {
  return `${labelKeys.cluster}=${cluster}`;
}

/** Metadata of an object `cluster` owns (deleted with it by garbage collection). */
export function ownedObjectMeta(cluster: PostgresCluster, name: string, component?: string) {
  const clusterName = cluster.metadata?.name ?? '';
  return {
    name,
    namespace: cluster.metadata?.namespace ?? 'default',
    labels: operandLabels(clusterName, component),
    ownerReferences: [controllerReference(cluster)],
  };
}
