// The PodDisruptionBudget that keeps node drains from taking down many cache shards at once.
import type { V1PodDisruptionBudget } from '@kubernetes/client-node';
import type { Memcached } from '../api/memcached-types.ts';
import { ownedObjectMeta, selectorLabels } from './operand-labels.ts';

/** The maxUnavailable in effect (the CR's, or 1). */
export function maxUnavailable(memcached: Memcached): number {
  return memcached.spec.podDisruptionBudget?.maxUnavailable ?? 1;
}

/** The desired PDB, or undefined when there should be none (disabled, or one pod or fewer). */
export function desiredPodDisruptionBudget(memcached: Memcached): V1PodDisruptionBudget | undefined {
  // With a single pod a PDB would block every node drain forever; with none there is nothing to protect.
  if (memcached.spec.size <= 1 || memcached.spec.podDisruptionBudget?.enabled === false) return undefined;
  const name = memcached.metadata?.name ?? '';
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: ownedObjectMeta(memcached),
    spec: {
      maxUnavailable: maxUnavailable(memcached),
      selector: { matchLabels: selectorLabels(name) },
      // A crash-looping pod must not block a drain: a cache pod that is not serving loses nothing.
      unhealthyPodEvictionPolicy: 'AlwaysAllow',
    },
  };
}
