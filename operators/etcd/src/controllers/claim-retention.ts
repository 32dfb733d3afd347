// Who owns a member's claim, by `spec.storage.retention`: with Delete the EtcdCluster controls it
// and the garbage collector deletes it with the cluster; with Retain nothing owns it, so it outlives
// the cluster and an EtcdCluster created again with the same name finds it (ADR 0306).
import type { V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import { controllerOf, controllerReference, type OwnerReference } from '@homeostat/reconcile';
import type { EtcdCluster } from '../api/etcd-cluster-types.ts';
import { memberLabel, nameOf, ordinalOf } from './cluster-names.ts';

/** The owner references a member claim of `cluster` carries under its retention. */
export function claimOwners(cluster: EtcdCluster): OwnerReference[] | undefined {
  return cluster.spec.storage.retention === 'Retain' ? undefined : [controllerReference(cluster)];
}

/**
 * The owner references `claim` should carry instead of its own, or undefined when they are right.
 * References to other owners are kept; only this cluster's controller reference comes or goes.
 */
export function claimOwnersToWrite(
  cluster: EtcdCluster,
  claim: V1PersistentVolumeClaim,
): OwnerReference[] | undefined {
  const current = claim.metadata?.ownerReferences ?? [];
  const uid = cluster.metadata?.uid;
  const others = current.filter((ref) => ref.uid !== uid);
  const wanted = [...others, ...(claimOwners(cluster) ?? [])];
  const same =
    wanted.length === current.length &&
    wanted.every((ref) => current.some((c) => c.uid === ref.uid && c.controller === ref.controller));
  return same ? undefined : wanted;
}

/**
 * True when `object` (a member pod or claim labelled for `cluster`'s name) is controlled by another
 * object: an EtcdCluster of that name deleted a moment ago, whose dependents the garbage collector
 * has yet to delete. Its data is on its way out, so it is never taken over. A claim nothing
 * controls (kept by `Retain`) is this cluster's to use.
 */
export function heldByAnother(cluster: EtcdCluster, object: V1PersistentVolumeClaim | V1Pod): boolean {
  const controller = controllerOf(object);
  return controller !== undefined && controller.uid !== cluster.metadata?.uid;
}

/** The member name of a claim labelled for `cluster`, when it is one of a member's. */
export function memberOfClaim(cluster: EtcdCluster, claim: V1PersistentVolumeClaim): string | undefined {
  const member = claim.metadata?.labels?.[memberLabel];
  return member !== undefined && ordinalOf(nameOf(cluster), member) !== undefined ? member : undefined;
}

/**
 * The member claims of `cluster`'s name that an earlier EtcdCluster of that name retained, judged
 * before this cluster has an etcd cluster ID: a member other than the first has no claim yet in a
 * new cluster (the first answers alone before any other is added, ADR 0301), and no claim this
 * cluster made is older than the cluster itself. Sorted by name.
 */
export function retainedClaimNames(
  cluster: EtcdCluster,
  claims: readonly V1PersistentVolumeClaim[],
): string[] {
  const created = cluster.metadata?.creationTimestamp;
  const since = created === undefined ? undefined : new Date(created).getTime();
  return claims
    .filter((claim) => {
      const member = memberOfClaim(cluster, claim);
      if (member === undefined) return false;
      if ((ordinalOf(nameOf(cluster), member) ?? 0) > 0) return true;
      const made = claim.metadata?.creationTimestamp;
      return since !== undefined && made !== undefined && new Date(made).getTime() < since;
    })
    .map((claim) => claim.metadata?.name ?? '')
    .sort();
}
