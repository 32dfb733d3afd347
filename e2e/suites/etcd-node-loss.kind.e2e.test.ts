// Runs on a kind cluster with three or more workers (`npm run e2e -- --cluster kind`), which it
// needs to stop a node: an EtcdCluster of 3 spreads its members over three nodes (spread policy
// Required; the operator on the control plane's node), and when the node of one member is stopped (`docker stop`, as a machine failing), the
// two members left keep a quorum and go on serving linearizable reads and writes; the operator
// reports the member not ready. Once the node is back, the member rejoins with what was written
// while it was away, and the cluster is 3 ready voters again. Collected only on such a cluster
// (e2e/vitest.config.ts); run by hand anywhere else, it fails saying why.
import type { V1Pod } from '@kubernetes/client-node';
import { waitUntil } from '@homeostat/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apply, kubectl, listObjects } from '../harness/cluster-access.ts';
import {
  etcdMemberList,
  getEtcdCluster,
  memberEtcdctl,
  memberPuts,
  memberSelector,
  memberValues,
  waitForMembers,
} from '../harness/etcd-clusters.ts';
import { operatorCharts } from '../harness/operator-charts.ts';
import { installOperator, type OperatorRelease } from '../harness/operator-release.ts';
import {
  StoppableNode,
  onControlPlaneValues,
  requireMultiNodeKind,
  waitForNodeReady,
} from '../harness/stoppable-node.ts';
import { createTestNamespace, type TestNamespace } from '../harness/test-namespace.ts';
import { isPodReady } from '../harness/workloads.ts';

const name = 'spread';

describe('an EtcdCluster across kind nodes, one member node stopped', () => {
  let namespace: TestNamespace;
  let ns: string;
  let operator: OperatorRelease;
  let stopped: StoppableNode | undefined;

  beforeAll(async () => {
    requireMultiNodeKind('this suite stops a node');
    namespace = await createTestNamespace('e2e-etcd-nodes');
    ns = namespace.name;
    operator = await installOperator(operatorCharts.etcd, ns, onControlPlaneValues());
  });

  afterAll(async () => {
    // A stopped node is started again whatever happened, so the next suite finds a whole cluster.
    await stopped?.restore();
    await kubectl(['-n', ns, 'delete', 'etcdcluster', '--all', '--wait=true', '--timeout=120s']).catch(
      () => '',
    );
    await operator?.cleanup();
    await namespace?.remove();
  });

  it("keeps serving reads and writes from two members while the third one's node is stopped; 3 again after", async () => {
    await apply([
      {
        apiVersion: 'etcd.homeostat.dev/v1alpha1',
        kind: 'EtcdCluster',
        metadata: { name, namespace: ns },
        spec: {
          size: 3,
          storage: { size: '1Gi' },
          resources: { requests: { cpu: '20m', memory: '64Mi' } },
          scheduling: { spread: { policy: 'Required' } },
        },
      },
    ]);
    await waitForMembers(ns, name, 3);
    const pods = (await listObjects<V1Pod>('pods', ns, memberSelector(name))).filter(isPodReady);
    const nodeOf = new Map(pods.map((p) => [p.metadata?.name ?? '', p.spec?.nodeName ?? '']));
    expect(new Set(nodeOf.values()).size, `members on ${[...nodeOf.values()].join(', ')}`).toBe(3);
    await memberPuts(
      ns,
      `${name}-0`,
      Array.from({ length: 10 }, (_, i) => [`before${i}`, `v${i}`] as const),
    );

    // The operator runs on the control plane's node, which stays: this suite is about the operand.
    const [lost, lostNode] = [...nodeOf].at(-1) ?? [];
    const survivors = [...nodeOf.keys()].filter((m) => m !== lost);
    stopped = new StoppableNode(lostNode ?? '');
    const stoppedAt = Date.now();
    await stopped.stop();

    // The two members left are a majority: a write through one and a linearizable read through
    // the other answer (after an election if the lost member led; that is the wait).
    let firstWrite: number | undefined;
    await waitUntil(
      'a write accepted by the members left',
      async () => {
        const ok = await memberEtcdctl(ns, survivors[0] ?? '', [
          'put',
          'during0',
          'v0',
          '--command-timeout=3s',
        ])
          .then(() => true)
          .catch(() => false);
        if (ok) firstWrite ??= Date.now();
        return ok;
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    for (let i = 1; i < 10; i++)
      await memberEtcdctl(ns, survivors[i % 2] ?? '', ['put', `during${i}`, `v${i}`]);
    for (const member of survivors) {
      const read = await memberEtcdctl(ns, member, [
        'get',
        'during',
        '--prefix',
        '--keys-only',
        '--consistency=l',
      ]);
      expect(read.split('\n').filter(Boolean), member).toHaveLength(10);
    }
    // A figure, not a bound: how long the cluster took to take writes again.
    console.warn(
      `etcd took writes again ${(((firstWrite ?? stoppedAt) - stoppedAt) / 1000).toFixed(1)} s after the node of ${lost} stopped`,
    );
    // The operator sees the member unreachable once the control plane calls its node lost.
    await waitForNodeReady(stopped.name, false);
    await waitUntil(
      `the status of ${name} shows ${lost} not ready`,
      async () => {
        const members = (await getEtcdCluster(ns, name))?.status?.members ?? [];
        return (
          members.some((m) => m.name === lost && !m.ready) && members.filter((m) => m.ready).length === 2
        );
      },
      { timeoutMs: 120_000, intervalMs: 1000 },
    );
    expect(await etcdMemberList(ns, survivors[0] ?? '')).toHaveLength(3);

    await stopped.start();
    console.warn(
      `etcd: the node of ${lost} was away ${((Date.now() - stoppedAt) / 1000).toFixed(0)} s; waiting for 3 ready voters`,
    );
    await waitForMembers(ns, name, 3);
    // The member that was away caught up: everything written before and during, from its own copy.
    for (const member of [...nodeOf.keys()]) {
      expect(await memberValues(ns, member, 'during'), member).toHaveLength(10);
      expect(await memberValues(ns, member, 'before'), member).toHaveLength(10);
    }
  }, 900_000);
});
