import type { KubeClient } from '../client/kube-client.ts';
import type { KubeObject, ResourceType } from '../client/resource-type.ts';

/** True when `obj` carries `finalizer`. */
export function hasFinalizer(obj: KubeObject, finalizer: string): boolean {
  return obj.metadata?.finalizers?.includes(finalizer) ?? false;
}

/** True when deletion has been requested (finalizers are holding the object). */
export function isBeingDeleted(obj: KubeObject): boolean {
  return Boolean(obj.metadata?.deletionTimestamp);
}

// Finalizer writes use a JSON patch guarded by the resourceVersion just read: a concurrent change
// fails with a ConflictError (and a retry) instead of silently dropping another party's finalizer.
async function writeFinalizers<T extends KubeObject>(
  client: KubeClient,
  type: ResourceType<T>,
  obj: T,
  finalizers: string[],
): Promise<T> {
  const meta = obj.metadata ?? {};
  if (!meta.name) throw new Error('cannot change finalizers of an object without a name');
  return client.patch(
    type,
    meta.name,
    meta.namespace,
    [
      { op: 'test', path: '/metadata/resourceVersion', value: meta.resourceVersion },
      { op: meta.finalizers ? 'replace' : 'add', path: '/metadata/finalizers', value: finalizers },
    ],
    { patchType: 'json' },
  );
}

/** Adds `finalizer` if missing; returns the updated object (or `obj` when nothing changed). */
export async function addFinalizer<T extends KubeObject>(
  client: KubeClient,
  type: ResourceType<T>,
  obj: T,
  finalizer: string,
): Promise<T> {
  if (hasFinalizer(obj, finalizer)) return obj;
  return writeFinalizers(client, type, obj, [...(obj.metadata?.finalizers ?? []), finalizer]);
}

/** Removes `finalizer` if present; returns the updated object (or `obj` when nothing changed). */
export async function removeFinalizer<T extends KubeObject>(
  client: KubeClient,
  type: ResourceType<T>,
  obj: T,
  finalizer: string,
): Promise<T> {
  if (!hasFinalizer(obj, finalizer)) return obj;
  return writeFinalizers(
    client,
    type,
    obj,
    (obj.metadata?.finalizers ?? []).filter((f) => f !== finalizer),
  );
}
