// The PersistentVolumeClaim of one instance.
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import type { PostgresCluster } from '../api/postgres-cluster-types.ts';
import { labelKeys, ownedObjectMeta } from './operand-labels.ts';

/**
 * The claim `instance` keeps its data directory on. With `storage.retention: Retain` it has no
 * owner, so deleting the cluster leaves it (and a cluster created again with the name finds it).
 */
export function desiredClaim(cluster: PostgresCluster, instance: string): V1PersistentVolumeClaim {
  const { size, storageClassName, retention } = cluster.spec.storage;
  const { ownerReferences, labels, ...meta } = ownedObjectMeta(cluster, instance);
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: {
      ...meta,
      labels: { ...labels, [labelKeys.instance]: instance },
      ...(retention === 'Delete' ? { ownerReferences } : {}),
    },
    spec: {
      accessModes: ['ReadWriteOnce'],
      resources: { requests: { storage: size } },
      ...(storageClassName ? { storageClassName } : {}),
    },
  };
}
