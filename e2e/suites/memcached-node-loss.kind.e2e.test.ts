// Runs on a kind cluster with three or more workers (`npm run e2e -- --cluster kind`), which it
// needs to stop a node: a Memcached of 3 spreads its pods over three nodes, and when the node of
// one member is stopped (`docker stop`, as a machine failing), the cache keeps serving through its
// Service from the members left, and the operator reports the member lost; once the node is back,
// the Memcached is whole again. Collected only on such a cluster (e2e/vitest.config.ts); run
// by hand anywhere else, it fails saying why.
import type { V1Pod } from '@kubernetes/client-node';
import { waitUntil } from '@homeostat/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operandImages } from '../images/image-names.ts';
import { apply, getObject, listObjects } from '../harness/cluster-access.ts';
import { memcachedSetGet } from '../harness/memcached-client.ts';
import { operatorCharts } from '../harness/operator-charts.ts';
import { StoppableNode, requireMultiNodeKind, waitForNodeReady } from '../harness/stoppable-node.ts';
import { installOperator, type OperatorRelease } from '../harness/operator-release.ts';
import { createTestNamespace, type TestNamespace } from '../harness/test-namespace.ts';
import { isPodReady } from '../harness/workloads.ts';

const cacheName = 'spread';
const podSelector = `app.kubernetes.io/name=memcached,app.kubernetes.io/instance=${cacheName}`;

interface MemcachedObject {
  status?: { readyReplicas?: number; observedGeneration?: number };
  metadata: { generation: number };
}

describe('Memcached across kind nodes, one node stopped', () => {
  let namespace: TestNamespace;
  let ns: string;
  let operator: OperatorRelease;
  let stopped: StoppableNode | undefined;

  const memcachedPods = () => listObjects<V1Pod>('pods', ns, podSelector);
  async function waitForReadyReplicas(size: number, timeoutMs: number): Promise<void> {
    let last: MemcachedObject | undefined;
    await waitUntil(
      `Memcached ${ns}/${cacheName} reports ${size} ready pods`,
      async () => {
        last = await getObject<MemcachedObject>('memcached', cacheName, ns);
        return (
          last?.status?.observedGeneration === last?.metadata.generation &&
          last?.status?.readyReplicas === size
        );
      },
      { timeoutMs, intervalMs: 1000, describe: () => JSON.stringify(last?.status) },
    );
  }
  beforeAll(async () => {
    requireMultiNodeKind('this suite stops a node');
    namespace = await createTestNamespace('e2e-memcached-nodes');
    ns = namespace.name;
    operator = await installOperator(operatorCharts.memcached, ns);
  });

  afterAll(async () => {
    // A stopped node is started again whatever happened, so the next suite finds a whole cluster.
    await stopped?.restore();
    await operator?.cleanup();
    await namespace?.remove();
  });

  it('spreads 3 members over 3 nodes and keeps serving through its Service when one node stops', async () => {
    await apply([
      {
        apiVersion: 'cache.homeostat.dev/v1alpha1',
        kind: 'Memcached',
        metadata: { name: cacheName, namespace: ns },
        spec: { size: 3, memoryLimitMB: 32 },
      },
    ]);
    await waitForReadyReplicas(3, 180_000);
    const pods = (await memcachedPods()).filter(isPodReady);
    const nodes = pods.map((p) => p.spec?.nodeName ?? '');
    // The operator prefers one member per node (its default anti-affinity).
    expect(new Set(nodes).size).toBe(3);
    const before = await memcachedSetGet({ namespace: ns, host: cacheName, image: operandImages.memcached });
    expect(before.lines).toEqual(before.expected);

    // A member's node that does not run the operator: this suite is about the operand.
    const operatorNodes = (
      await listObjects<V1Pod>('pods', ns, `app.kubernetes.io/instance=${operator.release}`)
    ).map((p) => p.spec?.nodeName);
    const victim = nodes.find((n) => !operatorNodes.includes(n));
    expect(victim, `a member node without the operator among ${nodes.join(', ')}`).toBeDefined();
    stopped = new StoppableNode(victim ?? '');
    const stoppedAt = Date.now();
    await stopped.stop();

    // The control plane notices the node is gone (node-monitor-grace-period), marks its pods not
    // ready, and the Service leaves the member out; from then on every session succeeds.
    await waitForNodeReady(stopped.name, false);
    await waitUntil(
      `the Service of ${cacheName} without the member on ${stopped.name}`,
      async () => {
        const slices = await listObjects<{
          endpoints?: { conditions?: { ready?: boolean }; nodeName?: string }[];
        }>('endpointslices', ns, `kubernetes.io/service-name=${cacheName}`);
        const ready = slices.flatMap((s) => s.endpoints ?? []).filter((e) => e.conditions?.ready);
        return ready.length === 2 && ready.every((e) => e.nodeName !== stopped?.name);
      },
      { timeoutMs: 120_000, intervalMs: 1000 },
    );
    for (let session = 0; session < 3; session++) {
      const during = await memcachedSetGet({
        namespace: ns,
        host: cacheName,
        image: operandImages.memcached,
      });
      expect(during.lines, `session ${session + 1} with ${stopped.name} stopped`).toEqual(during.expected);
      expect(during.phase).toBe('Succeeded');
    }
    // A figure, not a bound: mostly the control plane's grace period before it calls a node lost.
    console.warn(
      `memcached served from the survivors ${((Date.now() - stoppedAt) / 1000).toFixed(0)} s after the node stopped`,
    );
    await waitForReadyReplicas(2, 120_000);

    await stopped.start();
    await waitForReadyReplicas(3, 180_000);
    const after = await memcachedSetGet({ namespace: ns, host: cacheName, image: operandImages.memcached });
    expect(after.lines).toEqual(after.expected);
  });
});
