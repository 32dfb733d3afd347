// npm run bench:failover [-- K] [--cluster]: kills the primary under write load K times (default 10;
// 1 under BENCH_SMOKE=1) on real PostgreSQL processes, once with asynchronous and once with
// synchronous (required, ANY 1) replication per run, and prints each failover, then one JSON line.
// Failover seconds run from the kill to the first write acknowledged by the new primary. With
// --cluster it also runs K kills per synchronous mode (off, preferred, required) on the cluster in
// KUBECONFIG through the operator (failover-cluster.ts) and prints both side by side. It prints;
// it asserts nothing.
import { waitUntil } from '@homeostat/testing';
import { TestCluster, missingIds } from '../../operators/postgres/src/test-support/test-cluster.ts';
import { loopbackTarget, startWriteLoad } from '../../operators/postgres/src/test-support/write-load.ts';
import type { SynchronousReplication } from '../../operators/postgres/src/instance/synchronous.ts';
import { sized } from '../support/bench-size.ts';
import { loadAverage } from '../support/load-average.ts';
import { Teardown } from '../support/teardown.ts';
import { clusterFailoverRuns, type ClusterKill } from './failover-cluster.ts';

// SIGINT or SIGTERM stops the cluster of the current run and removes its files.
const teardown = new Teardown();
teardown.exitOnSignals('bench:failover');
const args = process.argv.slice(2);
const clusterMode = args.includes('--cluster');
const runs = Number(args.find((a) => !a.startsWith('--')) ?? process.env['BENCH_RUNS'] ?? sized(10, 1));
const detection = {
  failoverDelayMs: 1000,
  probeIntervalMs: 250,
  connect: { connectTimeoutMs: 2000, statementTimeoutMs: 10_000 },
};

interface RunResult {
  seconds: number;
  acked: number;
  lost: number;
  newPrimary: string;
}

async function killPrimaryUnderLoad(
  label: string,
  synchronous: SynchronousReplication | undefined,
): Promise<RunResult> {
  const cluster = await new TestCluster({ size: 3, label }).start();
  const forget = teardown.add(`clean up the ${label} cluster`, () => cluster.cleanup());
  let routedAt = Number.POSITIVE_INFINITY;
  const engine = cluster.engine({
    ...detection,
    ...(synchronous ? { synchronous } : {}),
    onEvent: (e) => {
      if (e.type === 'routed') routedAt = Date.now();
    },
  });
  const writer = startWriteLoad(loopbackTarget(cluster.router.port, cluster.bed.superuser));
  engine.start();
  try {
    if (synchronous) {
      await waitUntil(
        'synchronous standbys in place',
        async () => {
          const rows = await cluster.sql(
            cluster.endpoints[0]?.name ?? 'pg-0',
            "SELECT 1 FROM pg_stat_replication WHERE sync_state = 'quorum'",
          );
          return rows.length === 2;
        },
        { timeoutMs: 30_000 },
      );
    }
    await waitUntil('writes flowing', async () => writer.acked.length > 300, { timeoutMs: 30_000 });
    await cluster.instance('pg-0').kill9();
    const killedAt = Date.now();
    await waitUntil(
      'a write acknowledged by the new primary',
      async () => writer.acked.some((a) => a.at > routedAt),
      {
        timeoutMs: 120_000,
      },
    );
    const first = writer.acked.find((a) => a.at > routedAt);
    await writer.stop();
    await engine.stop();
    const lost = missingIds(writer.acked, await cluster.ids(engine.primary)).length;
    return {
      seconds: ((first?.at ?? killedAt) - killedAt) / 1000,
      acked: writer.acked.length,
      lost,
      newPrimary: engine.primary,
    };
  } finally {
    await writer.stop();
    await engine.stop();
    await cluster.cleanup();
    forget();
  }
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? (s[mid] ?? 0) : ((s[mid - 1] ?? 0) + (s[mid] ?? 0)) / 2;
};

// The PostgreSQL processes are unref'd children (they must not hold a test runner open), so
// waiting for one to exit would otherwise let Node's event loop run dry and quit mid-run.
const keepAlive = setInterval(() => undefined, 60_000);
const seconds: number[] = [];
const hostSeconds = { async: [] as number[], sync: [] as number[] };
let lostAsync = 0;
let lostSync = 0;
console.warn(
  `settings: failover_delay_ms=${detection.failoverDelayMs} probe_interval_ms=${detection.probeIntervalMs} connect_timeout_ms=${detection.connect.connectTimeoutMs} wal_retrieve_retry_interval=200ms, 3 instances, 1 writer; load average ${loadAverage()}`,
);
for (let run = 1; run <= runs; run++) {
  for (const mode of ['async', 'sync'] as const) {
    const result = await killPrimaryUnderLoad(
      `bench-${mode}`,
      mode === 'sync' ? { number: 1, dataDurability: 'required' } : undefined,
    );
    seconds.push(result.seconds);
    hostSeconds[mode].push(result.seconds);
    if (mode === 'sync') lostSync += result.lost;
    else lostAsync += result.lost;
    console.warn(
      `run ${run} ${mode}: failover ${result.seconds.toFixed(2)} s, ${result.newPrimary} promoted, ${result.acked} writes acknowledged, ${result.lost} lost`,
    );
  }
}
clearInterval(keepAlive);

const figures = (xs: number[], lost: number) => ({
  kills: xs.length,
  median_seconds: Number(median(xs).toFixed(3)),
  max_seconds: Number((xs.length ? Math.max(...xs) : 0).toFixed(3)),
  acked_rows_lost: lost,
});
let cluster: Record<string, ReturnType<typeof figures>> | undefined;
if (clusterMode) {
  console.warn(
    `cluster mode: the operator from its chart on KUBECONFIG=${process.env['KUBECONFIG'] ?? '(unset)'}, the chart's defaults (failoverDelay 1s, probe interval 500 ms), SIGKILL of the primary postgres, 1 writer through -rw; load average ${loadAverage()}`,
  );
  const kills = await clusterFailoverRuns(
    ['off', 'preferred', 'required'],
    runs,
    teardown,
    (k: ClusterKill) =>
      console.warn(
        k.failed !== undefined
          ? `cluster ${k.mode}: kill FAILED, no figure: ${k.failed}`
          : `cluster ${k.mode}: writes back after ${k.seconds.toFixed(2)} s, primary ${k.primaryBefore} → ${k.primaryAfter}${k.primaryAfter === k.primaryBefore ? ' (restarted in place before the failover delay)' : ''}, ${k.acked} acknowledged, ${k.lost} lost; load average ${loadAverage()}`,
      ),
  );
  cluster = {};
  for (const mode of ['off', 'preferred', 'required'] as const) {
    const of = kills.filter((k) => k.mode === mode && k.failed === undefined);
    const failed = kills.filter((k) => k.mode === mode && k.failed !== undefined).length;
    if (failed)
      console.warn(`cluster ${mode}: ${failed} of ${runs} kills failed and are left out of the figures`);
    cluster[mode] = figures(
      of.map((k) => k.seconds),
      of.reduce((n, k) => n + k.lost, 0),
    );
  }
  const host = { off: figures(hostSeconds.async, lostAsync), required: figures(hostSeconds.sync, lostSync) };
  const row = (where: string, mode: string, f: ReturnType<typeof figures> | undefined) =>
    f
      ? `${where.padEnd(14)}${mode.padEnd(10)}${String(f.kills).padStart(6)}${f.median_seconds.toFixed(2).padStart(10)}${f.max_seconds.toFixed(2).padStart(9)}${String(f.acked_rows_lost).padStart(6)}`
      : `${where.padEnd(14)}${mode.padEnd(10)}     -         -        -     -`;
  console.warn(
    [
      'where         mode       kills  median s    max s  lost',
      row('host', 'off', host.off),
      row('cluster', 'off', cluster['off']),
      row('host', 'preferred', undefined),
      row('cluster', 'preferred', cluster['preferred']),
      row('host', 'required', host.required),
      row('cluster', 'required', cluster['required']),
      `load average at the end: ${loadAverage()}`,
    ].join('\n'),
  );
}
process.stdout.write(
  `${JSON.stringify({
    runs,
    median_failover_seconds: Number(median(seconds).toFixed(3)),
    max_failover_seconds: Number(Math.max(...seconds).toFixed(3)),
    acked_writes_lost_sync: lostSync,
    acked_writes_lost_async: lostAsync,
    ...(cluster ? { cluster } : {}),
  })}\n`,
);
