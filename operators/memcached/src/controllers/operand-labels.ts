// Labels and metadata on everything the operator creates for one Memcached.
import { controllerReference } from '@homeostat/reconcile';
import type { Memcached } from '../api/memcached-types.ts';

/** The field manager, event reporter and `app.kubernetes.io/managed-by` value of this operator. */
export const operatorName = 'memcached-operator';

/** Labels that pick one Memcached's pods: the StatefulSet selector and the Service selector. */
export function selectorLabels(name: string): Record<string, string> {
  return { 'app.kubernetes.io/name': 'memcached', 'app.kubernetes.io/instance': name };
}

/** Selector labels plus the labels that say who made the object and why. */
export function operandLabels(name: string): Record<string, string> {
  return {
    ...selectorLabels(name),
    'app.kubernetes.io/component': 'cache',
    'app.kubernetes.io/part-of': 'homeostat',
    'app.kubernetes.io/managed-by': operatorName,
  };
}

/** The selector as a string, as the scale subresource and `kubectl get -l` take it. */
export function selectorString(name: string): string {
  return Object.entries(selectorLabels(name))
    .map(([key, value]) => `${key}=${value}`)
    .join(',');
}

/** Label selector of the pod and ConfigMap informers: only what this operator (or its workloads) made. */
export const managedObjectsSelector = `app.kubernetes.io/name=memcached,app.kubernetes.io/managed-by=${operatorName}`;

/** Metadata of an object owned by `memcached`: same name and namespace, operand labels, controller reference. */
export function ownedObjectMeta(memcached: Memcached) {
  const name = memcached.metadata?.name ?? '';
  return {
    name,
    namespace: memcached.metadata?.namespace ?? 'default',
    labels: operandLabels(name),
    ownerReferences: [controllerReference(memcached)],
  };
}
