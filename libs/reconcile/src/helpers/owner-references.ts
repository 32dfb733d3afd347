import type { KubeObject, OwnerReference } from '../client/resource-type.ts';

/**
 * The ownerReference that makes `owner` the controller of a child: garbage collection deletes
 * the child with its owner, and the child's events enqueue the owner.
 */
export function controllerReference(owner: KubeObject): OwnerReference {
  const { apiVersion, kind } = owner;
  const name = owner.metadata?.name;
  const uid = owner.metadata?.uid;
  if (!apiVersion || !kind || !name || !uid) {
    throw new Error(
      `cannot own children: ${kind ?? '?'} ${name ?? '?'} lacks apiVersion, kind, name or uid (read it from the API first)`,
    );
  }
  return { apiVersion, kind, name, uid, controller: true, blockOwnerDeletion: true };
}

/** The controller ownerReference of `obj`, if any. */
export function controllerOf(obj: KubeObject): OwnerReference | undefined {
  return obj.metadata?.ownerReferences?.find((ref) => ref.controller);
}

/** True when `child` is controlled by `owner` (same UID). */
export function isControlledBy(child: KubeObject, owner: KubeObject): boolean {
  return controllerOf(child)?.uid === owner.metadata?.uid && owner.metadata?.uid !== undefined;
}
