// Runs against the cluster in KUBECONFIG: the Memcached operator from its chart with two replicas
// (leader election is on by default). One replica holds the Lease and reconciles; when its pod is
// deleted (a node drain, a rollout), the standby takes the Lease over, leaves the running memcached
// pods alone, and reconciling goes on. The replicas run with V8's JIT (the charts' `jit` value), so
// this suite is also where that command runs on a real cluster.
import type { V1Lease, V1Pod } from '@kubernetes/client-node';
import { waitUntil } from '@homeostat/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apply, getObject, kubectl, listObjects } from '../harness/cluster-access.ts';
import { operatorCharts } from '../harness/operator-charts.ts';
import { installOperator, type OperatorRelease } from '../harness/operator-release.ts';
import { createTestNamespace, type TestNamespace } from '../harness/test-namespace.ts';
import { isPodReady } from '../harness/workloads.ts';

interface MemcachedObject {
  status?: { readyReplicas?: number; observedGeneration?: number };
  metadata: { generation: number };
}

describe('Memcached operator with two replicas, on the cluster in KUBECONFIG', () => {
  let namespace: TestNamespace;
  let ns: string;
  let operator: OperatorRelease;

  const lease = () => getObject<V1Lease>('lease', operator.release, ns);
  const operatorPods = () => listObjects<V1Pod>('pods', ns, `app.kubernetes.io/instance=${operator.release}`);

  async function waitForReadyPods(name: string, size: number): Promise<void> {
    let last: MemcachedObject | undefined;
    await waitUntil(
      `Memcached ${ns}/${name} reports ${size} ready pods`,
      async () => {
        last = await getObject<MemcachedObject>('memcached', name, ns);
        return (
          last?.status?.observedGeneration === last?.metadata.generation &&
          last?.status?.readyReplicas === size
        );
      },
      { timeoutMs: 180_000, intervalMs: 1000, describe: () => JSON.stringify(last?.status) },
    );
  }

  // What a needless write would change: the StatefulSet's generation and the pods' identities.
  async function operandState(): Promise<{ generation: number | undefined; pods: string[] }> {
    const statefulSet = await getObject<{ metadata: { generation?: number } }>('statefulset', 'ha', ns);
    const pods = await listObjects<{ metadata: { uid: string } }>(
      'pods',
      ns,
      'app.kubernetes.io/instance=ha',
    );
    return { generation: statefulSet?.metadata.generation, pods: pods.map((p) => p.metadata.uid).sort() };
  }

  // Reconciles the operator pod has finished, from its /metrics through the API server's pod proxy.
  async function reconcileCount(pod: string): Promise<number> {
    const metrics = await kubectl([
      'get',
      '--raw',
      `/api/v1/namespaces/${ns}/pods/${pod}:8080/proxy/metrics`,
    ]);
    return metrics
      .split('\n')
      .filter(
        (line) =>
          line.startsWith('controller_runtime_reconcile_total{') && line.includes('controller="memcached"'),
      )
      .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
  }

  beforeAll(async () => {
    namespace = await createTestNamespace('e2e-memcached-ha');
    ns = namespace.name;
    operator = await installOperator(operatorCharts.memcached, ns, { replicaCount: 2, jit: 'true' });
  });

  afterAll(async () => {
    await operator?.cleanup();
    await namespace?.remove();
  });

  it("runs both replicas Ready with jit=true: the image's Node command without --jitless", async () => {
    const pods = await operatorPods();
    expect(pods.filter(isPodReady)).toHaveLength(2);
    for (const pod of pods) {
      const command = pod.spec?.containers[0]?.command ?? [];
      expect(command[0]).toBe('node');
      expect(command).toContain('--optimize-for-size');
      expect(command).not.toContain('--jitless');
    }
  });

  it('has one leader among two Ready replicas; deleting its pod hands the Lease to the other, which keeps reconciling', async () => {
    const pods = (await operatorPods()).filter(isPodReady).map((p) => p.metadata?.name ?? '');
    expect(pods).toHaveLength(2);
    let holder = '';
    await waitUntil(
      'a replica holds the Lease',
      async () => {
        holder = (await lease())?.spec?.holderIdentity ?? '';
        return pods.includes(holder);
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );

    await apply([
      {
        apiVersion: 'cache.homeostat.dev/v1alpha1',
        kind: 'Memcached',
        metadata: { name: 'ha', namespace: ns },
        spec: { size: 1, memoryLimitMB: 32 },
      },
    ]);
    await waitForReadyPods('ha', 1);
    const before = await operandState();

    const deleted = Date.now();
    await kubectl(['-n', ns, 'delete', 'pod', holder, '--wait=false']);
    let next = '';
    await waitUntil(
      `the Lease leaves ${holder} for a live replica`,
      async () => {
        next = (await lease())?.spec?.holderIdentity ?? '';
        const live = (await operatorPods())
          .filter((p) => !p.metadata?.deletionTimestamp)
          .map((p) => p.metadata?.name ?? '');
        return next !== '' && next !== holder && live.includes(next);
      },
      { timeoutMs: 90_000, intervalMs: 250 },
    );
    // A figure, not a bound: the old leader releases the Lease on SIGTERM, so this is far below
    // the 15 s lease duration a crashed leader would cost.
    console.warn(
      `e2e: Lease moved from ${holder} to ${next} ${((Date.now() - deleted) / 1000).toFixed(1)} s after the delete`,
    );
    expect((await lease())?.spec?.leaseTransitions ?? 0).toBeGreaterThanOrEqual(1);

    // The new leader reconciles everything once it leads; a converged Memcached must come out of
    // that untouched: no new StatefulSet generation, the same pods (an operator upgrade, a drain or
    // a crash of the leader never restarts memcached, which would empty the cache).
    await waitUntil(`${next} has reconciled`, async () => (await reconcileCount(next)) > 0, {
      timeoutMs: 60_000,
      intervalMs: 500,
    });
    expect(await operandState()).toEqual(before);

    // And it acts: a scale goes through to pods.
    await kubectl(['-n', ns, 'scale', 'memcached/ha', '--replicas=2']);
    await waitForReadyPods('ha', 2);
    await kubectl(['-n', ns, 'delete', 'memcached', 'ha', '--wait=true', '--timeout=120s']);
  });
});
