// Builders and readers shared by the Memcached integration tests.
import type { V1Pod } from '@kubernetes/client-node';
import { builtin, type KubeClient } from '@homeostat/reconcile';
import { memcacheds, type Memcached, type MemcachedSpecFields } from '../api/memcached-types.ts';
import { operandLabels } from '../controllers/operand-labels.ts';

/** A Memcached as a user writes it: only the fields they set (the API server defaults the rest). */
export function memcachedObject(
  name: string,
  namespace: string,
  spec: Partial<MemcachedSpecFields> = {},
): Memcached {
  return { metadata: { name, namespace }, spec: spec as MemcachedSpecFields };
}

/** A spec as the API server stores it: `spec` over the schema's defaults (for unit tests). */
export function defaultedSpec(spec: Partial<MemcachedSpecFields> = {}): MemcachedSpecFields {
  return {
    size: 1,
    port: 11211,
    memoryLimitMB: 64,
    spread: { policy: 'Disabled', topologyKey: 'kubernetes.io/hostname' },
    shutdown: { drainSeconds: 5 },
    exporter: { enabled: true },
    ...spec,
  };
}

/** Creates a Memcached and returns it as stored (with uid and defaults). */
export function createMemcached(
  client: KubeClient,
  name: string,
  namespace: string,
  spec: Partial<MemcachedSpecFields> = {},
): Promise<Memcached> {
  return client.create(memcacheds, memcachedObject(name, namespace, spec));
}

/** Events about one object with one reason, newest last. */
export async function eventsAbout(client: KubeClient, namespace: string, name: string, reason: string) {
  const list = await client.list(builtin.events, { namespace });
  return list.items.filter((e) => e.regarding?.name === name && e.reason === reason);
}

/**
 * Creates a pod of a Memcached the way its Deployment's ReplicaSet would (there is no
 * kube-controller-manager here), and marks it Ready or not through the status subresource.
 */
export async function createOperandPod(
  client: KubeClient,
  memcached: string,
  namespace: string,
  podName: string,
  ready: boolean,
): Promise<V1Pod> {
  await client.create(builtin.pods, {
    metadata: { name: podName, namespace, labels: operandLabels(memcached) },
    spec: { containers: [{ name: 'memcached', image: 'example.invalid/memcached:test' }] },
  });
  return client.patchStatus(builtin.pods, podName, namespace, {
    phase: 'Running',
    conditions: [
      { type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: new Date().toISOString() },
    ],
  });
}
