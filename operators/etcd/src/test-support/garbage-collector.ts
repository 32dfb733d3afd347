// A stand-in for the kube-controller-manager's garbage collector in the controller tests (the test
// control plane runs none): once an owner is gone, it deletes each object of the kinds the operator
// makes whose owner references all name it, as the collector's background deletion does. What it
// decides from is the objects' ownerReferences alone, the same as the real one.
import { builtin, type KubeClient, type KubeObject, type ResourceType } from '@homeostat/reconcile';

const kinds: readonly ResourceType<KubeObject>[] = [
  builtin.pods,
  builtin.persistentVolumeClaims,
  builtin.services,
  builtin.podDisruptionBudgets,
  builtin.secrets,
];

/** Deletes the dependents of the deleted owner `ownerUid` in `namespace`; returns their names. */
export async function collectGarbage(
  client: KubeClient,
  namespace: string,
  ownerUid: string,
): Promise<string[]> {
  const deleted: string[] = [];
  for (const type of kinds) {
    const list = await client.list(type, { namespace });
    for (const object of list.items) {
      const owners = object.metadata?.ownerReferences ?? [];
      if (owners.length === 0 || !owners.every((o) => o.uid === ownerUid)) continue;
      const name = object.metadata?.name ?? '';
      await client.delete(type, name, namespace);
      deleted.push(`${type.kind}/${name}`);
    }
  }
  return deleted;
}
