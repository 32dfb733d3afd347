// The PodDisruptionBudgets that keep node drains from taking the primary or several replicas.
import type { V1PodDisruptionBudget } from '@kubernetes/client-node';
import type { PostgresCluster } from '../api/postgres-cluster-types.ts';
import { disruptionBudgetNames } from './cluster-names.ts';
import { clusterSelector, labelKeys, ownedObjectMeta } from './operand-labels.ts';

/**
 * With more than one instance: the primary may not be evicted (a drain of its node waits for a
 * switchover), and the replicas only one at a time. A single instance gets none, since its budget
 * would block every drain of its node forever.
 */
export function desiredDisruptionBudgets(cluster: PostgresCluster): V1PodDisruptionBudget[] {
  if (!cluster.spec.podDisruptionBudget.enabled || cluster.spec.instances < 2) return [];
  const name = cluster.metadata?.name ?? '';
  const names = disruptionBudgetNames(name);
  const selector = clusterSelector(name);
  return [
    {
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: ownedObjectMeta(cluster, names.primary),
      spec: { minAvailable: 1, selector: { matchLabels: { ...selector, [labelKeys.role]: 'primary' } } },
    },
    {
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: ownedObjectMeta(cluster, names.replicas),
      spec: {
        maxUnavailable: 1,
        selector: { matchLabels: { ...selector, [labelKeys.role]: 'replica' } },
        // A replica that is not running loses nothing by being evicted; let the drain go on.
        unhealthyPodEvictionPolicy: 'AlwaysAllow',
      },
    },
  ];
}
