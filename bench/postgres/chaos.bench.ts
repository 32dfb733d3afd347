// npm run bench:chaos:postgres [-- --faults N] [--seed S] [--kinds a,b] [--cluster kind]: the
// PostgreSQL operator's promises under faults, as figures. The operator is installed from its
// chart into a namespace of its own on the cluster in KUBECONFIG (or the local cluster, brought up
// or reused with its images, as `npm run e2e` does; or, with `--cluster kind`, a kind cluster of
// three workers, where the operator runs on the control-plane node, the instances one per worker,
// and the primary's node may be stopped); one three-instance PostgreSQLCluster in synchronous mode
// `required` takes a write load through its -rw Service that records every acknowledged id, while
// a watcher asks every instance every 200 ms whether it accepts writes. Then N faults (default 50;
// 2 under BENCH_SMOKE=1) drawn at random from chaos-faults.ts, each once the cluster is healthy
// again. It prints one line per fault, then one JSON line: acknowledged rows lost (the promise:
// 0), moments with two writable instances (0), whether the cluster came back healthy by itself
// after every fault, and the time to writes accepted again per fault kind. It asserts nothing.
import { apply, kubectl } from '../../e2e/harness/cluster-access.ts';
import { operatorCharts } from '../../e2e/harness/operator-charts.ts';
import { installOperator } from '../../e2e/harness/operator-release.ts';
import {
  ackedTable,
  missingRows,
  overlappingWriters,
  queryOnce,
  startWriteLoad,
  writeOutageSeconds,
} from '../../e2e/harness/postgres-client.ts';
import { PostgresClusterUnderTest, requiredSyncCluster } from '../../e2e/harness/postgres-cluster.ts';
import { onControlPlaneValues } from '../../e2e/harness/stoppable-node.ts';
import { createTestNamespace } from '../../e2e/harness/test-namespace.ts';
import { waitUntil } from '@homeostat/testing';
import { chaosRun, firstLine, max, median } from '../support/chaos-run.ts';
import { loadAverage } from '../support/load-average.ts';
import { causeFault, faultKinds, nodeStopKinds, type FaultKind } from './chaos-faults.ts';

// The smoke run causes the two most common faults, so CI proves the harness end to end cheaply.
const { faultCount, seed, kinds, random, teardown, onMultiNodeKind, nodes, setUp } = await chaosRun(
  'bench:chaos:postgres',
  {
    all: faultKinds,
    smoke: ['primary-postgres-sigkill', 'primary-pod-force-deleted'],
    nodeStops: nodeStopKinds,
  },
);
/** How long the cluster has to be healthy again after a fault before it counts as not recovered. */
const recoveryTimeoutMs = 240_000;

interface FaultResult {
  kind: FaultKind;
  /** From the fault to the first write acknowledged after writes began to fail (0: none failed). */
  writesBackSeconds: number;
  /** From the fault to the cluster healthy again with every instance ready. */
  healthySeconds: number;
  recovered: boolean;
  problem?: string;
}

const namespace = await createTestNamespace('bench-chaos-postgres');
teardown.add(`delete namespace ${namespace.name}`, () => namespace.remove());
// On kind the operator runs on the control-plane node, which no fault stops.
const operator = await setUp(() =>
  installOperator(operatorCharts.postgres, namespace.name, onMultiNodeKind ? onControlPlaneValues() : {}),
);
teardown.add('uninstall the operator', () => operator.cleanup());
const name = 'chaos';
const cluster = new PostgresClusterUnderTest(namespace.name, name);
const target = await setUp(async () => {
  // One instance per node on kind, so that a node stopped takes one instance with it.
  await apply([
    requiredSyncCluster(namespace.name, name, onMultiNodeKind ? { antiAffinity: 'required' } : undefined),
  ]);
  await cluster.waitHealthy(3);
  const rw = await cluster.readWriteTarget();
  await queryOnce(rw, ackedTable);
  return rw;
});

const roles = cluster.watchRoles();
teardown.add('stop watching roles', () => roles.stop());
const load = startWriteLoad(target);
teardown.add('stop the write load', () => load.stop());
await setUp(() => waitUntil('writes flowing', async () => load.acked.length >= 100, { timeoutMs: 60_000 }));

const results: FaultResult[] = [];

/** Prints the pods, the recent Events and the operator's last log lines: why a cluster is stuck. */
async function explainStuck(result: FaultResult): Promise<void> {
  const ns = namespace.name;
  const show = async (what: string, args: string[]) =>
    console.error(`--- ${what}\n${await kubectl(['-n', ns, ...args]).catch((e: unknown) => String(e))}`);
  console.error(`--- ${result.kind} left the cluster unhealthy: ${result.problem ?? ''}`);
  await show('pods', ['get', 'pods', '-o', 'wide']);
  await show('events', ['get', 'events', '--sort-by=.lastTimestamp']);
  await show('the operator', ['logs', '-l', `app.kubernetes.io/instance=${operator.release}`, '--tail=80']);
  for (const pod of await cluster.pods().catch(() => [])) {
    const podName = pod.metadata?.name ?? '';
    await show(`${podName} postgres`, ['logs', podName, '-c', 'postgres', '--tail=30']);
  }
}
console.error(
  `bench:chaos:postgres: ${faultCount} faults from ${kinds.join(', ')} (seed ${seed}), load ${loadAverage()}`,
);
for (let i = 0; i < faultCount; i++) {
  const kind = kinds[Math.floor(random() * kinds.length)] ?? 'primary-postgres-sigkill';
  const at = Date.now();
  let result: FaultResult;
  try {
    const caused = await causeFault(kind, { cluster, operatorRelease: operator.release, random, nodes });
    await caused.settle();
    let recovered = true;
    let problem = '';
    await cluster.waitHealthy(3, 'healthy after the fault', recoveryTimeoutMs).catch((error: unknown) => {
      recovered = false;
      problem = firstLine(error);
      console.error(error instanceof Error ? error.message : String(error));
    });
    const healthySeconds = (Date.now() - at) / 1000;
    // Writes may come back a moment after the status reads healthy (the Service's endpoints).
    await waitUntil(
      'writes accepted again',
      async () => writeOutageSeconds(load, at, Date.now()) !== undefined,
      {
        timeoutMs: 60_000,
        intervalMs: 100,
      },
    ).catch(() => undefined);
    const writesBackSeconds = writeOutageSeconds(load, at, Date.now()) ?? Number.NaN;
    result = { kind, writesBackSeconds, healthySeconds, recovered, ...(problem ? { problem } : {}) };
  } catch (error) {
    result = {
      kind,
      writesBackSeconds: Number.NaN,
      healthySeconds: Number.NaN,
      recovered: false,
      problem: firstLine(error),
    };
  }
  results.push(result);
  // Rows lost so far, after each fault: which fault lost them, when any are.
  // Only rows acknowledged before the read began count: the writer goes on while it reads.
  const readFrom = Date.now();
  const present = result.recovered ? await cluster.presentRows() : undefined;
  const lostSoFar = present
    ? load.acked.filter((row) => row.at < readFrom && !present.has(row.id)).length
    : undefined;
  console.error(
    `fault ${i + 1}/${faultCount} ${kind}: writes back after ${result.writesBackSeconds.toFixed(2)} s, healthy after ${result.healthySeconds.toFixed(1)} s, rows lost so far ${lostSoFar ?? '?'}${result.recovered ? '' : ` NOT RECOVERED: ${result.problem}`}`,
  );
  // A cluster that did not come back is left as it is, with what explains it: the next faults
  // would measure nothing, and the namespace stays for a person to look at.
  if (!result.recovered) {
    await explainStuck(result);
    await nodes.startAll();
    break;
  }
}

await load.stop();
await roles.stop();
const lost = missingRows(load, await cluster.presentRows());
const twoWriters = overlappingWriters(roles.samples, 1000);
const perKind = Object.fromEntries(
  kinds.map((kind) => {
    const of = results.filter((r) => r.kind === kind);
    const back = of.map((r) => r.writesBackSeconds).filter(Number.isFinite);
    return [kind, { faults: of.length, writes_back_median_s: median(back), writes_back_max_s: max(back) }];
  }),
);
const figures = {
  faults: results.length,
  seed,
  synchronous: 'required',
  acknowledged_rows: load.acked.length,
  acknowledged_rows_lost: lost.length,
  two_writer_moments: twoWriters.length,
  recovered_every_time: results.every((r) => r.recovered),
  longest_writes_back_s: max(results.map((r) => r.writesBackSeconds).filter(Number.isFinite)),
  per_kind: perKind,
  not_recovered: results.filter((r) => !r.recovered).map((r) => `${r.kind}: ${r.problem ?? ''}`),
  load_average: loadAverage(),
};
if (figures.recovered_every_time) {
  await kubectl(['-n', namespace.name, 'delete', 'postgresqlcluster', name, '--wait=true']).catch(() => '');
  await teardown.run();
} else {
  console.error(
    `left namespace ${namespace.name} as it is; remove it with: kubectl delete namespace ${namespace.name} (and helm uninstall ${operator.release} -n ${namespace.name})`,
  );
}
process.stdout.write(`${JSON.stringify(figures)}\n`);
