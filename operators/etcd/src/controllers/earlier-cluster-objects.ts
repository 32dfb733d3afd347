// What an EtcdCluster deleted earlier under the same name may have left: objects the garbage
// collector has not removed yet, and member claims `storage.retention: Retain` kept. Each decides
// whether the new cluster may start, and on what.
import type { EtcdCluster } from '../api/etcd-cluster-types.ts';
import { heldByAnother, memberOfClaim, retainedClaimNames } from './claim-retention.ts';
import { nameOf, ordinalOf } from './cluster-names.ts';
import type { OwnedObjects } from './owned-objects.ts';
import { Refusal } from './refusal.ts';

/**
 * Pods, claims or Secrets labelled for this cluster's name but controlled by another object: those
 * of an EtcdCluster of the same name deleted a moment ago, which the garbage collector has not
 * removed yet. Nothing starts on them (their data is on its way out) and nothing is made beside
 * them; the cluster waits, saying why.
 */
export function assertNoPreviousObjects(cluster: EtcdCluster, owned: OwnedObjects): void {
  const held = [...owned.podsOf(cluster), ...owned.claimsOf(cluster), ...owned.secretsOf(cluster)]
    .filter((o) => heldByAnother(cluster, o))
    .map((o) => o.metadata?.name ?? '')
    .sort();
  if (held.length === 0) return;
  throw new Refusal(
    'PreviousClusterObjects',
    `${held.join(', ')} belong to an earlier EtcdCluster named ${nameOf(cluster)} and are being garbage-collected; members start once they are gone`,
  );
}

/**
 * Claims of members other than the first, before this cluster has an etcd cluster ID: a new
 * cluster has none (the first member alone answers before any other is added, ADR 0301), so these
 * were kept by `storage.retention: Retain` for an EtcdCluster of this name deleted earlier.
 */
export function hasRetainedMembers(cluster: EtcdCluster, owned: OwnedObjects): boolean {
  return owned
    .claimsOf(cluster)
    .some((c) => (ordinalOf(nameOf(cluster), memberOfClaim(cluster, c) ?? '') ?? 0) > 0);
}

/**
 * A cluster to be restored from bootstrap.fromBackup over claims an earlier EtcdCluster of its name
 * retained: its members would restart on that cluster's data (the backup never read), or the first
 * member's restore would find its data and no snapshot. Neither is what was asked: nothing is made
 * until the claims are deleted (the claims are watched: the backup is then restored), or the
 * EtcdCluster is created again without fromBackup, which is fixed at creation (the members then
 * resume on their data, ADR 0306).
 */
export function assertNoRetainedClaims(cluster: EtcdCluster, owned: OwnedObjects): void {
  const retained = retainedClaimNames(cluster, owned.claimsOf(cluster));
  if (retained.length === 0) return;
  throw new Refusal(
    'RetainedClaimsConflict',
    `retained member claims ${retained.join(', ')} hold a previous cluster's data; bootstrap.fromBackup would be ignored: delete the claims to restore the backup, or create the EtcdCluster again without bootstrap.fromBackup (fixed at creation) to resume on the retained data`,
    { permanent: true },
  );
}
