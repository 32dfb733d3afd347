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
  ackedTable,
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
  /** Why this kill produced no figure (a step of the harness or the cluster did not happen in time). */
  failed?: string;
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
      await queryOnce(await cluster.readWriteTarget(), ackedTable);
      let nextId = 1;
      for (let run = 0; run < runs; run++) {
        // One kill that goes wrong is reported and the run goes on: a 10-kill run used to end at
        // the first step that timed out, with nothing printed for the kills not made.
        let kill: ClusterKill;
        try {
          const made = await killOnce(cluster, mode, nextId);
          nextId = made.nextId;
          kill = made;
        } catch (error) {
          const why = error instanceof Error ? error.message : String(error);
          kill = { mode, failed: why, seconds: 0, acked: 0, lost: 0, primaryBefore: '', primaryAfter: '' };
          nextId += 100_000;
        }
        kills.push(kill);
        report(kill);
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

/** One SIGKILL of the primary's postmaster under a write load, once the cluster is healthy. */
async function killOnce(
  cluster: PostgresClusterUnderTest,
  mode: SynchronousMode,
  firstId: number,
): Promise<ClusterKill & { nextId: number }> {
  await cluster.waitHealthy(3);
  const before = await cluster.primaryPod();
  const onNode = podOnNode(before);
  // The status may read healthy a moment before the kubelet has started postgres again.
  let postmaster: Awaited<ReturnType<typeof postmasterOf>>;
  await waitUntil(
    `the postgres process of pod ${before.metadata?.name} on node ${onNode.node}`,
    async () => (postmaster = await postmasterOf(onNode)) !== undefined,
    { timeoutMs: 60_000, intervalMs: 200 },
  );
  const load = startWriteLoad(await cluster.readWriteTarget(), firstId);
  try {
    await waitUntil('writes flowing', async () => load.acked.length >= 100, { timeoutMs: 60_000 });
    const killedAt = Date.now();
    if (!postmaster) throw new Error(`no postgres process of pod ${before.metadata?.name}`);
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
    return {
      mode,
      seconds,
      acked: load.acked.length,
      lost: missingRows(load, await cluster.presentRows()).length,
      primaryBefore: before.metadata?.name ?? '',
      primaryAfter: after.status?.currentPrimary ?? '',
      nextId: (load.acked.at(-1)?.id ?? firstId) + 1000,
    };
  } finally {
    await load.stop();
  }
}
