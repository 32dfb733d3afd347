import type { KubeObject } from '../client/resource-type.ts';

/** A reconcile request: which object to converge. Cluster-scoped kinds have no namespace. */
export interface ObjectKey {
  namespace?: string;
  name: string;
}

/** "namespace/name" (or "name" for cluster-scoped objects): the key of caches and queues. */
export function keyOf(obj: KubeObject | ObjectKey): string {
  const meta = 'metadata' in obj ? obj.metadata : (obj as ObjectKey);
  const name = meta?.name;
  if (!name) throw new Error('an object without a name has no key');
  return meta.namespace ? `${meta.namespace}/${name}` : name;
}

/** Parses a key made by keyOf. */
export function parseKey(key: string): ObjectKey {
  const slash = key.indexOf('/');
  return slash === -1 ? { name: key } : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}
