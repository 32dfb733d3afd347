// Runs on a kind cluster with three or more workers (`npm run e2e -- --cluster kind`), which it
// needs to stop a node: a PostgreSQLCluster of 3 instances (`required` synchronous replication,
// one instance per node) under a write load through its -rw Service that records every
// acknowledged row; the primary's node is stopped (`docker stop`, as a machine failing). The
// operator (on the control-plane node, which no suite stops) fails over to a replica, writes are
// accepted again, and no acknowledged row is missing; the seconds until writes resumed are
// printed, never asserted. Once the node is back, the old primary rejoins as a replica. Collected
// only on such a cluster (e2e/vitest.config.ts); run by hand anywhere else, it fails saying why.
import { waitUntil } from '@homeostat/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apply, kubectl } from '../harness/cluster-access.ts';
import { operatorCharts } from '../harness/operator-charts.ts';
import { installOperator, type OperatorRelease } from '../harness/operator-release.ts';
import {
  ackedTable,
  missingRows,
  queryOnce,
  startWriteLoad,
  waitForWritesAfterFault,
  writeOutageSeconds,
} from '../harness/postgres-client.ts';
import { PostgresClusterUnderTest, requiredSyncCluster } from '../harness/postgres-cluster.ts';
import { StoppableNode, onControlPlaneValues, requireMultiNodeKind } from '../harness/stoppable-node.ts';
import { createTestNamespace, type TestNamespace } from '../harness/test-namespace.ts';

const clusterName = 'spread';

describe('a PostgreSQLCluster across kind nodes, the primary node stopped', () => {
  let namespace: TestNamespace;
  let ns: string;
  let operator: OperatorRelease;
  let pgc: PostgresClusterUnderTest;
  let stopped: StoppableNode | undefined;

  beforeAll(async () => {
    requireMultiNodeKind('this suite stops a node');
    namespace = await createTestNamespace('e2e-postgres-nodes');
    ns = namespace.name;
    pgc = new PostgresClusterUnderTest(ns, clusterName);
    operator = await installOperator(operatorCharts.postgres, ns, onControlPlaneValues());
  });

  afterAll(async () => {
    // A stopped node is started again whatever happened, so the next suite finds a whole cluster.
    await stopped?.restore();
    await kubectl(['-n', ns, 'delete', 'postgresqlcluster', '--all', '--wait=true', '--timeout=120s']).catch(
      () => '',
    );
    await operator?.cleanup();
    await namespace?.remove();
  });

  it('fails over when the primary node stops, losing no acknowledged write; the old primary rejoins', async () => {
    await apply([requiredSyncCluster(ns, clusterName, { antiAffinity: 'required' })]);
    const before = (await pgc.waitHealthy(3)).status;
    const pods = await pgc.pods();
    const nodes = pods.map((p) => p.spec?.nodeName ?? '');
    expect(new Set(nodes).size, `instances on ${nodes.join(', ')}`).toBe(3);
    const primary = await pgc.primaryPod();
    const oldPrimary = primary.metadata?.name ?? '';

    const target = await pgc.readWriteTarget();
    await queryOnce(target, ackedTable);
    const load = startWriteLoad(target);
    let outage: number | undefined;
    try {
      await waitUntil('writes acknowledged before the node stops', async () => load.acked.length >= 20, {
        timeoutMs: 60_000,
        intervalMs: 100,
      });
      stopped = new StoppableNode(primary.spec?.nodeName ?? '');
      const stoppedAt = Date.now();
      await stopped.stop();
      await waitForWritesAfterFault(load, stoppedAt);
      await waitUntil(
        'another primary',
        async () => {
          const current = (await pgc.get())?.status?.currentPrimary;
          return current !== undefined && current !== oldPrimary;
        },
        { timeoutMs: 180_000, intervalMs: 500 },
      );
      const settled = Date.now();
      await waitUntil(
        'writes accepted after the failover',
        async () => writeOutageSeconds(load, stoppedAt, settled) !== undefined,
        { timeoutMs: 120_000, intervalMs: 100 },
      );
      outage = writeOutageSeconds(load, stoppedAt, settled);
    } finally {
      await load.stop();
    }
    const missing = missingRows(load, await pgc.presentRows());
    // A figure, not a bound: detection of a silent node is most of it.
    console.warn(
      `[postgres e2e] primary node stopped: writes accepted again after ${outage?.toFixed(2)} s; ` +
        `${load.acked.length} rows acknowledged, ${missing.length} missing`,
    );
    expect(missing, 'acknowledged rows missing after the failover').toEqual([]);
    const failedOver = (await pgc.get())?.status;
    expect(failedOver?.failovers ?? 0).toBe((before?.failovers ?? 0) + 1);
    expect(failedOver?.timeline).toBeGreaterThan(before?.timeline ?? 0);

    await stopped?.start();
    const after = (await pgc.waitHealthy(3, 'healthy with the old primary back')).status;
    expect(after?.instanceStatuses?.find((i) => i.name === oldPrimary)).toMatchObject({
      role: 'replica',
      ready: true,
    });
  }, 900_000);
});
