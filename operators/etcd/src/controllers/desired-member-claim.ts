// The PersistentVolumeClaim of one member: its data directory, kept when its pod is deleted, and
// when the cluster is deleted too under `storage.retention: Retain` (claim-retention.ts).
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import type { EtcdCluster } from '../api/etcd-cluster-types.ts';
import { claimOwners } from './claim-retention.ts';
import { claimName, memberIdAnnotation, memberLabels, nameOf, namespaceOf } from './cluster-names.ts';

/**
 * The claim of `member`, made for the etcd member `memberId` (hex, or `seed`): a claim made for
 * another ID holds data of an older identity (ADR 0301).
 */
export function desiredMemberClaim(
  cluster: EtcdCluster,
  member: string,
  memberId: string,
): V1PersistentVolumeClaim {
  const { storage } = cluster.spec;
  const owners = claimOwners(cluster);
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: {
      name: claimName(member),
      namespace: namespaceOf(cluster),
      labels: memberLabels(nameOf(cluster), member),
      ...(owners ? { ownerReferences: owners } : {}),
      annotations: { [memberIdAnnotation]: memberId },
    },
    spec: {
      accessModes: ['ReadWriteOnce'],
      resources: { requests: { storage: storage.size } },
      ...(storage.storageClassName ? { storageClassName: storage.storageClassName } : {}),
    },
  };
}

/** The member ID a claim was made for, if it says. */
export function claimMemberId(claim: V1PersistentVolumeClaim | undefined): string | undefined {
  return claim?.metadata?.annotations?.[memberIdAnnotation];
}
