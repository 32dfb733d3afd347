// The PodDisruptionBudget: node drains take one member at a time, so a drain never costs quorum.
import type { V1PodDisruptionBudget } from '@kubernetes/client-node';
import type { EtcdCluster } from '../api/etcd-cluster-types.ts';
import { nameOf, ownedMeta, selectorLabels } from './cluster-names.ts';

/** The desired PDB, or undefined for a single member (a PDB would then block every drain forever). */
export function desiredPodDisruptionBudget(cluster: EtcdCluster): V1PodDisruptionBudget | undefined {
  if (cluster.spec.size <= 1) return undefined;
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: ownedMeta(cluster, nameOf(cluster)),
    spec: {
      // One at a time even where quorum would allow two (5 members): the operator's own one-at-a-time
      // work (upgrade, defragmentation, replacement) must never meet a second voluntary outage.
      maxUnavailable: 1,
      selector: { matchLabels: selectorLabels(nameOf(cluster)) },
      // A member that is not ready already counts against quorum; evicting it loses nothing more,
      // and refusing would block a drain behind a crash-looping pod.
      unhealthyPodEvictionPolicy: 'AlwaysAllow',
    },
  };
}
