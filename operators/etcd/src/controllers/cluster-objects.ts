// The objects around an EtcdCluster's members: its Services and PodDisruptionBudget, and the owner
// references of its member claims. Nothing after them waits on a refused write (it is only recorded
// in `ctx.writes`, ADR 0603); a Service name someone else holds stops everything (NameTaken).
import { assertOwnedOrAbsent, builtin, isControlledBy } from '@homeostat/reconcile';
import { claimOwnersToWrite, heldByAnother, memberOfClaim } from './claim-retention.ts';
import { nameOf, namespaceOf } from './cluster-names.ts';
import { desiredPodDisruptionBudget } from './desired-pdb.ts';
import { desiredClientService, desiredPeerService } from './desired-services.ts';
import type { Round } from './round.ts';

/**
 * Services and the PodDisruptionBudget. Nothing after them waits on a refused write (it is only
 * recorded in `ctx.writes`); a Service name someone else holds stops everything (NameTaken), as
 * clients would reach their Service.
 */
export async function applyClusterObjects(round: Round): Promise<void> {
  const { cluster, ctx, deps } = round;
  for (const service of [desiredPeerService(cluster), desiredClientService(cluster)]) {
    const name = service.metadata?.name ?? '';
    // Only labelled Services are cached; one of this name without the label is someone else's.
    const current =
      deps.owned.service(cluster, name) ??
      (await ctx.client.find(builtin.services, name, namespaceOf(cluster)));
    // Someone else's stops everything (a refused write, NameTaken): clients would reach it.
    assertOwnedOrAbsent(current, cluster, 'Service');
    await ctx.writes.attempt(`applying Service ${name}`, () =>
      ctx.client.applyIfChanged(builtin.services, service, current),
    );
  }
  const pdb = desiredPodDisruptionBudget(cluster);
  const current = deps.owned.podDisruptionBudget(cluster, nameOf(cluster));
  if (pdb) {
    await ctx.writes.attempt(`applying PodDisruptionBudget ${nameOf(cluster)}`, () =>
      ctx.client.applyIfChanged(builtin.podDisruptionBudgets, pdb, current),
    );
  } else if (current && isControlledBy(current, cluster)) {
    await ctx.writes.attempt(`deleting PodDisruptionBudget ${nameOf(cluster)}`, () =>
      ctx.client.delete(builtin.podDisruptionBudgets, nameOf(cluster), namespaceOf(cluster), {
        uid: current.metadata?.uid ?? '',
      }),
    );
  }
}

/**
 * Each member claim's owner reference as `storage.retention` asks (claim-retention.ts): set under
 * Delete, removed under Retain. A refused write is recorded, never waited on.
 */
export async function applyClaimRetention(round: Round): Promise<void> {
  const { cluster, ctx, deps } = round;
  for (const claim of deps.owned.claimsOf(cluster)) {
    const name = claim.metadata?.name ?? '';
    if (!memberOfClaim(cluster, claim) || claim.metadata?.deletionTimestamp) continue;
    if (heldByAnother(cluster, claim)) continue;
    const ownerReferences = claimOwnersToWrite(cluster, claim);
    if (!ownerReferences) continue;
    await ctx.writes.attempt(`setting the owner of PersistentVolumeClaim ${name}`, () =>
      ctx.client.patch(builtin.persistentVolumeClaims, name, namespaceOf(cluster), {
        // The resourceVersion makes it a compare-and-swap: a claim changed since it was read is not
        // given an owner list computed from its old one.
        metadata: { ownerReferences, resourceVersion: claim.metadata?.resourceVersion },
      }),
    );
  }
}
