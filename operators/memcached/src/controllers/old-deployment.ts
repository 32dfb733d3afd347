// The way up from operators before ADR 0404, which ran a Memcached's pods from a Deployment of the
// same name. The StatefulSet is made beside it (both pod sets match the Service, so clients are
// served throughout), and the Deployment is deleted only once the StatefulSet's pods are all Ready:
// never a moment with fewer serving pods than the spec asks for.
import type { V1StatefulSet } from '@kubernetes/client-node';
import { builtin, isControlledBy, type ReconcileContext } from '@homeostat/reconcile';
import type { Memcached } from '../api/memcached-types.ts';

/** Whether `statefulSet` has seen its latest spec and runs `size` pods, all updated and Ready. */
export function statefulSetServes(statefulSet: V1StatefulSet | undefined, size: number): boolean {
  const status = statefulSet?.status;
  if (!statefulSet || !status) return false;
  return (
    (status.observedGeneration ?? 0) >= (statefulSet.metadata?.generation ?? 0) &&
    (status.readyReplicas ?? 0) >= size &&
    (status.updatedReplicas ?? 0) >= size
  );
}

/**
 * Deletes the Deployment an older operator made for `memcached`, once `statefulSet` serves; a
 * Deployment this Memcached does not control is never touched. Throws a WriteFailure.
 */
export async function replaceOldDeployment(
  memcached: Memcached,
  { cache, client, events, writes }: ReconcileContext,
  statefulSet: V1StatefulSet | undefined,
): Promise<void> {
  const name = memcached.metadata?.name ?? '';
  const namespace = memcached.metadata?.namespace ?? 'default';
  const deployment = cache.get(builtin.deployments, name, namespace);
  if (!deployment || !isControlledBy(deployment, memcached)) return;
  // Not yet: the StatefulSet's status changes wake this reconcile again (it is owned).
  if (!statefulSetServes(statefulSet, memcached.spec.size)) return;
  await writes.step(`deleting Deployment ${name}`, () =>
    client.delete(builtin.deployments, name, namespace, { uid: deployment.metadata?.uid ?? '' }),
  );
  await events.normal(
    memcached,
    'DeploymentReplaced',
    'Delete',
    `deleted Deployment ${name} made by an earlier operator: StatefulSet ${name} runs all ${memcached.spec.size} pods Ready`,
  );
}
