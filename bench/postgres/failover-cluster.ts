// The cluster mode of `npm run bench:failover -- --cluster [K]`: the PostgreSQL operator installed
// from its chart into a namespace of its own on the cluster in KUBECONFIG (the local cluster: the
// kill reaches the postgres process on the node), one three-instance PostgreSQLCluster per
// synchronous mode, and K times per mode the primary's postgres killed with SIGKILL under a write
// load through the -rw Service. Seconds run from the kill to the first write acknowledged after
// writes began to fail; lost rows are acknowledged rows missing afterwards.
import { apply, kubectl } from '../../e2e/harness/cluster-access.ts';
import { operatorCharts } from '../../e2e/harness/operator-charts.ts';
import { installOperator } from '../../e2e/harness/operator-release.ts';
import { killOnNode, podOnNode, postmasterOf } from '../../e2e/harness/pod-processes.ts';
import {
  ackedTableSql,
  missingRows,
  queryOnce,
  startWriteLoad,
  waitForWritesAfterFault,
  writeOutageSeconds,
} from '../../e2e/harness/postgres-client.ts';
import { PostgresClusterUnderTest } from '../../e2e/harness/postgres-cluster.ts';
import { createTestNamespace } from '../../e2e/harness/test-namespace.ts';
import { waitUntil } from '@homeostat/testing';
import type { Teardown } from '../support/teardown.ts';

export type SynchronousMode = 'off' | 'preferred' | 'required';

export interface ClusterKill {
  mode: SynchronousMode;
  seconds: number;
  acked: number;
  lost: number;
  /** The primary afterwards: another instance (a failover) or the same one restarted in place. */
  primaryAfter: string;
  primaryBefore: string;
}

/** Runs `runs` kills per mode and reports each through `report` as it happens. */
export async function clusterFailoverRuns(
  modes: readonly SynchronousMode[],
  runs: number,
  teardown: Teardown,
  report: (kill: ClusterKill) => void,
): Promise<ClusterKill[]> {
  const namespace = await createTestNamespace('bench-postgres-failover');
  const forgetNamespace = teardown.add(`delete namespace ${namespace.name}`, () => namespace.remove());
  const operator = await installOperator(operatorCharts.postgres, namespace.name);
  const forgetOperator = teardown.add('uninstall the operator', () => operator.cleanup());
  const kills: ClusterKill[] = [];
  try {
    for (const mode of modes) {
      const name = `bench-${mode}`;
      await apply([
        {
          apiVersion: 'postgres.homeostat.dev/v1alpha1',
          kind: 'PostgreSQLCluster',
          metadata: { name, namespace: namespace.name },
          spec: {
            instances: 3,
            postgresql: {
              parameters: { shared_buffers: '16MB', max_connections: '50' },
              synchronous: { mode, number: 1 },
            },
          },
        },
      ]);
      const cluster = new PostgresClusterUnderTest(namespace.name, name);
      await cluster.waitHealthy(3);
      await queryOnce(await cluster.readWriteTarget(), ackedTableSql);
      let nextId = 1;
      for (let run = 0; run < runs; run++) {
        await cluster.waitHealthy(3);
        const before = await cluster.primaryPod();
        const onNode = podOnNode(before);
        const postmaster = await postmasterOf(onNode);
        if (!postmaster)
          throw new Error(`no postgres process of pod ${before.metadata?.name} on node ${onNode.node}`);
        const load = startWriteLoad(await cluster.readWriteTarget(), nextId);
        try {
          await waitUntil('writes flowing', async () => load.acked.length >= 100, { timeoutMs: 60_000 });
          const killedAt = Date.now();
          await killOnNode(onNode, postmaster);
          await waitForWritesAfterFault(load, killedAt);
          const after = await cluster.waitHealthy(3);
          const settled = Date.now();
          await waitUntil(
            'writes accepted again',
            async () => writeOutageSeconds(load, killedAt, settled) !== undefined,
            { timeoutMs: 120_000, intervalMs: 50 },
          );
          const seconds = writeOutageSeconds(load, killedAt, settled) ?? 0;
          await load.stop();
          nextId = (load.acked.at(-1)?.id ?? nextId) + 1000;
          const kill: ClusterKill = {
            mode,
            seconds,
            acked: load.acked.length,
            lost: missingRows(load, await cluster.presentRows()).length,
            primaryBefore: before.metadata?.name ?? '',
            primaryAfter: after.status?.currentPrimary ?? '',
          };
          kills.push(kill);
          report(kill);
        } finally {
          await load.stop();
        }
      }
      await kubectl(['-n', namespace.name, 'delete', 'postgresqlcluster', name, '--wait=true']);
    }
  } finally {
    await operator.cleanup();
    forgetOperator();
    await namespace.remove();
    forgetNamespace();
  }
  return kills;
}
