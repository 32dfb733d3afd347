// Ready-made `map` functions for `watch()`: which reconcile key a change of another kind wakes.
import type { ObjectKey } from '../cache/object-key.ts';
import type { KubeObject } from '../client/resource-type.ts';

/**
 * Maps an object to the object of the watched kind that `label` names, in the object's own
 * namespace: what an operator whose objects carry their owner's name in a label (the
 * `app.kubernetes.io/instance` convention) watches them by. Unlike an owner reference, a label
 * still names the owner after it was deleted and made again, and objects it does not control
 * (retained claims, a name someone else holds) wake it too. An object without the label maps to
 * nothing.
 */
export function mapToLabelledOwner(label: string): (obj: KubeObject) => ObjectKey[] {
  return (obj) => {
    const name = obj.metadata?.labels?.[label];
    return name ? [{ namespace: obj.metadata?.namespace ?? 'default', name }] : [];
  };
}
