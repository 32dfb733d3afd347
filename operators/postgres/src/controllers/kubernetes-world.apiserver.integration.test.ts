// The Kubernetes world of the failover engine (kubernetes-world.ts) against a real kube-apiserver +
// etcd: what its routing and fencing do to the pods the cluster's Services select. There is no
// endpoints controller here, so "a Service routes to a pod" is checked as Kubernetes decides it:
// the pods a list with the Service's own selector returns.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedKubeConfig } from '@homeostat/testing/shared';
import { builtin, KubeClient } from '@homeostat/reconcile';
import type { V1Service } from '@kubernetes/client-node';
import { postgresClusters } from '../api/postgres-cluster-types.ts';
import { createCluster, prepareNamespace } from '../test-support/pod-cluster.ts';
import { desiredInstancePod } from './desired-pod.ts';
import { desiredServices } from './desired-services.ts';
import { podWorld, setPodRole } from './kubernetes-world.ts';
import { routingFieldManager } from './operand-labels.ts';

const kubeConfig = sharedKubeConfig();
const namespace = `pg-world-${process.pid}`;
const client = new KubeClient(kubeConfig, { fieldManager: 'test-user' });
const routingClient = new KubeClient(kubeConfig, { fieldManager: routingFieldManager });
// Keeps a deleted pod in the API, as a deletion nobody completes does (a finalizer, a refusal).
const held = 'test.homeostat.dev/held';

/** The pods a Service's selector matches, by name. */
async function selected(service: V1Service): Promise<string[]> {
  const selector = Object.entries(service.spec?.selector ?? {})
    .map(([key, value]) => `${key}=${value}`)
    .join(',');
  const pods = await client.list(builtin.pods, { namespace, labelSelector: selector });
  return pods.items.map((p) => p.metadata?.name ?? '').sort();
}

describe('the pod world on a real kube-apiserver + etcd', () => {
  let services: V1Service[] = [];

  beforeAll(async () => {
    await prepareNamespace(kubeConfig, client, namespace);
    await createCluster(client, namespace, 'fence', { instances: 2 });
    const cluster = await client.get(postgresClusters, 'fence', namespace);
    services = desiredServices(cluster);
    for (const service of services) await client.apply(builtin.services, service);
    for (const [instance, role] of [
      ['fence-0', 'primary'],
      ['fence-1', 'replica'],
    ] as const) {
      const pod = desiredInstancePod(cluster, instance, {
        image: 'example.test/pg',
        role,
        initdb: 'allowed',
      });
      await client.create(builtin.pods, { ...pod, metadata: { ...pod.metadata, finalizers: [held] } });
      await setPodRole(routingClient, namespace, instance, role, role);
    }
  });

  afterAll(async () => {
    for (const pod of ['fence-0', 'fence-1']) {
      await client
        .patch(builtin.pods, pod, namespace, { metadata: { finalizers: null } })
        .catch(() => undefined);
    }
    client.close();
    routingClient.close();
  });

  it('takes a fenced instance out of every client Service, even while its pod is still there', async () => {
    const service = (suffix: string): V1Service => {
      const found = services.find((s) => s.metadata?.name === `fence-${suffix}`);
      if (!found) throw new Error(`no Service fence-${suffix}`);
      return found;
    };
    const [rw, ro, r, instances] = [service('rw'), service('ro'), service('r'), service('instances')];
    // Routed: each Service selects what it promises.
    expect(await selected(rw)).toEqual(['fence-0']);
    expect(await selected(ro)).toEqual(['fence-1']);
    expect(await selected(r)).toEqual(['fence-0', 'fence-1']);

    const world = podWorld({
      client,
      routingClient,
      namespace,
      goneTimeoutMs: 500,
      // Never asked: the fence fails on the held pod before it checks the instance.
      answers: () => Promise.reject(new Error('no instance runs in this test')),
    });
    await expect(world.fencing.fence({ name: 'fence-0', host: '127.0.0.1', port: 1 })).rejects.toThrow(
      /still exists/,
    );
    const fenced = await client.get(builtin.pods, 'fence-0', namespace);
    expect(fenced.metadata?.deletionTimestamp).toBeDefined();

    expect(await selected(rw)).toEqual([]);
    expect(await selected(ro)).toEqual(['fence-1']);
    expect(await selected(r)).toEqual(['fence-1']);
    // The headless Service keeps it: the fence's proof asks the instance itself, by that name.
    expect(await selected(instances)).toEqual(['fence-0', 'fence-1']);
  });
});
