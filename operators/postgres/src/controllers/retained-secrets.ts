// Secrets kept with the claims (`storage.retention: Retain`): without an owner, garbage collection
// leaves them when the cluster is deleted, and a cluster created again with the name logs in with
// the passwords its retained data holds (ADR 0211).
import type { V1Secret } from '@kubernetes/client-node';
import type { PostgresCluster } from '../api/postgres-cluster-types.ts';
import { labelKeys } from './operand-labels.ts';

/** A Secret of this cluster's name and labels that no object controls: one an earlier cluster left. */
export function isRetainedFor(secret: V1Secret, cluster: PostgresCluster): boolean {
  return (
    secret.metadata?.labels?.[labelKeys.cluster] === cluster.metadata?.name &&
    !secret.metadata?.ownerReferences?.some((r) => r.controller)
  );
}

/**
 * The merge patch that drops this cluster's owner reference from `secret` (retention changed to
 * Retain), guarded by its resourceVersion so that it never drops a reference added meanwhile.
 */
export function withoutOwner(secret: V1Secret, cluster: PostgresCluster) {
  return {
    metadata: {
      resourceVersion: secret.metadata?.resourceVersion,
      ownerReferences: (secret.metadata?.ownerReferences ?? []).filter(
        (r) => r.uid !== cluster.metadata?.uid,
      ),
    },
  };
}
