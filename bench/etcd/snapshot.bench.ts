// npm run bench:snapshot -- [--size-mb S] [--runs N]
// Fills one real etcd member to S MB (default 256; 16 under BENCH_SMOKE=1), then takes snapshots
// in turn with the engine (takeBackup into a file sink: health check, the snapshot stream, written
// and its sha256 trailer checked on the sink's writer thread, fsync, the exact revision read from
// the file's pages, the record; each step's time printed) and with
// `etcdctl snapshot save`, N of each (default 3; 1 under BENCH_SMOKE=1). The engine runs bundled in
// a process of its own, as the operator image runs it, twice per run: with the image's Node flags
// (operatorNodeFlags: --jitless, ADR 0601) and with V8's JIT; it times takeBackup itself (an
// operator does not start a process per snapshot), etcdctl is timed as a command. Then it restores
// in turn with the engine's steps (shape check, etcdutl, which checks the hash) and with plain
// `etcdutl snapshot restore`. Prints every run, the medians side by side with the load average,
// and one JSON line. It prints figures; it asserts nothing about time.
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { execFile } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { promisify } from 'node:util';
import { bundleOperator, operatorNodeFlags } from '@homeostat/operator-kit/bundle';
import { binaryPath, diesWithParent } from '@homeostat/testing';
import { startEtcdCluster } from '@homeostat/testing/etcd';
import {
  openClient,
  planRestore,
  readMemberStatus,
  runRestore,
  type EtcdConnection,
} from '@homeostat/etcd-operator';
import { sized } from '../support/bench-size.ts';
import { loadAverage } from '../support/load-average.ts';
import { Teardown } from '../support/teardown.ts';

const { values } = parseArgs({
  options: {
    'size-mb': { type: 'string', default: sized('256', '16') },
    runs: { type: 'string', default: sized('3', '1') },
  },
});
const sizeMb = Number(values['size-mb']);
const runs = Number(values.runs);
const say = (line: string) => console.error(`bench:snapshot ${line}`);
const run = promisify(execFile);
const mb = (bytes: number) => bytes / (1024 * 1024);
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? (s[mid] ?? 0) : ((s[mid - 1] ?? 0) + (s[mid] ?? 0)) / 2;
};
const round = (x: number, digits = 2) => Number(x.toFixed(digits));

async function timed<T>(work: () => Promise<T>): Promise<[T, number]> {
  const start = process.hrtime.bigint();
  const result = await work();
  return [result, Number(process.hrtime.bigint() - start) / 1e9];
}

/** Puts distinct 512 KiB values from 8 writers until the member's database reaches `targetMb`. */
async function fill(connection: EtcdConnection, clientUrl: string, targetMb: number): Promise<number> {
  const client = openClient(connection);
  const value = Buffer.alloc(512 * 1024, 'etcd-bench-');
  let next = 0;
  let dbBytes = 0;
  try {
    while (mb(dbBytes) < targetMb) {
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          for (let i = 0; i < 8; i++)
            await client.put(`bench/${String(next++).padStart(8, '0')}`).value(value);
        }),
      );
      dbBytes = (await readMemberStatus(connection, clientUrl)).dbSizeBytes;
    }
  } finally {
    client.close();
  }
  return dbBytes;
}

const teardown = new Teardown();
teardown.exitOnSignals('bench:snapshot');
try {
  const cluster = await startEtcdCluster({
    size: 1,
    namePrefix: 'bench',
    extraFlags: [`--quota-backend-bytes=${Math.max(2, Math.ceil((sizeMb * 3) / 1024)) * 1024 * 1024 * 1024}`],
  });
  teardown.add('stop etcd', () => cluster.stop());
  const work = await mkdtemp(join(tmpdir(), 'homeostat-bench-snapshot-'));
  teardown.add('remove the snapshots', () => rm(work, { recursive: true, force: true }));
  const member = [...cluster.members.values()][0];
  if (!member) throw new Error('no member started');
  const connection: EtcdConnection = { endpoints: [member.clientUrl] };
  say(`filling ${member.name} at ${member.clientUrl} to ${sizeMb} MB`);
  const [dbBytes, fillSeconds] = await timed(() => fill(connection, member.clientUrl, sizeMb));
  say(`filled: db ${mb(dbBytes).toFixed(1)} MB in ${fillSeconds.toFixed(1)} s`);

  const etcdctl = binaryPath('etcdctl');
  const etcdutl = binaryPath('etcdutl');
  const bundle = join(work, 'engine', 'engine-snapshot.mjs');
  await bundleOperator(fileURLToPath(new URL('./engine-snapshot-process.ts', import.meta.url)), bundle, {
    bundleFiles: ['node_modules/etcd3/proto'],
  });
  const variants = [
    { key: 'image', label: `engine (${operatorNodeFlags.join(' ')})`, flags: [...operatorNodeFlags] },
    { key: 'jit', label: 'engine (JIT)', flags: [] as string[] },
  ] as const;
  const engineSeconds: Record<(typeof variants)[number]['key'], number[]> = { image: [], jit: [] };
  // Seconds of each takeBackup step, per variant, per run: where the time goes.
  const enginePhases: Record<(typeof variants)[number]['key'], Map<string, number[]>> = {
    image: new Map(),
    jit: new Map(),
  };
  const etcdctlSeconds: number[] = [];
  // The first engine snapshot is kept for the restores; the others are removed as soon as they
  // are timed, as etcdctl's are, so neither side's later runs share the disk with more files.
  let snapshot = '';
  let snapshotBytes = 0;
  const loadBefore = loadAverage();
  say(`load average ${loadBefore}`);

  const engineSnapshot = async (flags: readonly string[], name: string) => {
    const [file, args] = diesWithParent(process.execPath, [
      ...flags,
      bundle,
      `--endpoint=${member.clientUrl}`,
      `--dir=${work}`,
      `--name=${name}`,
    ]);
    const { stdout } = await run(file, args, { maxBuffer: 1 << 20 });
    return JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as {
      seconds: number;
      bytes: number;
      sha256: string;
      location: string;
      phases: Record<string, number>;
    };
  };

  for (let i = 0; i < runs; i++) {
    for (const variant of variants) {
      const result = await engineSnapshot(variant.flags, `engine-${variant.key}-${i}.db`);
      engineSeconds[variant.key].push(result.seconds);
      for (const [phase, seconds] of Object.entries(result.phases)) {
        const list = enginePhases[variant.key].get(phase) ?? [];
        list.push(seconds);
        enginePhases[variant.key].set(phase, list);
      }
      snapshotBytes = result.bytes;
      if (snapshot)
        await Promise.all([result.location, `${result.location}.json`].map((f) => rm(f, { force: true })));
      else snapshot = result.location;
      say(
        `run ${i + 1} ${variant.label.padEnd(44)} snapshot: ${mb(result.bytes).toFixed(1)} MB in ${result.seconds.toFixed(2)} s ` +
          `= ${(mb(result.bytes) / result.seconds).toFixed(1)} MB/s (sha256 ${result.sha256.slice(0, 12)}…)`,
      );
      if (variant.key === 'image') {
        const etcdctlFile = join(work, `etcdctl-${i}.db`);
        const [, seconds] = await timed(() =>
          run(etcdctl, [`--endpoints=${member.clientUrl}`, 'snapshot', 'save', etcdctlFile], {
            maxBuffer: 1 << 20,
          }),
        );
        const etcdctlBytes = (await stat(etcdctlFile)).size;
        etcdctlSeconds.push(seconds);
        say(
          `run ${i + 1} ${'etcdctl snapshot save'.padEnd(44)} snapshot: ${mb(etcdctlBytes).toFixed(1)} MB in ${seconds.toFixed(2)} s ` +
            `= ${(mb(etcdctlBytes) / seconds).toFixed(1)} MB/s`,
        );
        await rm(etcdctlFile, { force: true });
      }
    }
  }

  const engineRestores: number[] = [];
  const etcdutlRestores: number[] = [];
  for (let i = 0; i < runs; i++) {
    const member = {
      name: 'restored',
      peerUrl: 'http://127.0.0.1:2380',
      clientUrl: 'http://127.0.0.1:2379',
      dataDir: join(work, `engine-restore-${i}`),
    };
    const plan = planRestore({
      snapshotPath: snapshot,
      members: [member],
      clusterToken: 'bench',
      etcdutlPath: etcdutl,
    });
    const [, engineSeconds] = await timed(() => runRestore(plan));
    engineRestores.push(engineSeconds);
    say(`run ${i + 1} engine  restore (shape check, then etcdutl): ${engineSeconds.toFixed(2)} s`);
    await rm(member.dataDir, { recursive: true, force: true });

    const plainDir = join(work, `plain-restore-${i}`);
    const [, plainSeconds] = await timed(() =>
      run(etcdutl, [
        'snapshot',
        'restore',
        snapshot,
        '--name=restored',
        '--initial-cluster=restored=http://127.0.0.1:2380',
        '--initial-cluster-token=bench',
        '--initial-advertise-peer-urls=http://127.0.0.1:2380',
        `--data-dir=${plainDir}`,
      ]),
    );
    etcdutlRestores.push(plainSeconds);
    say(`run ${i + 1} etcdutl restore: ${plainSeconds.toFixed(2)} s`);
    await rm(plainDir, { recursive: true, force: true });
  }

  const etcdctlMedian = median(etcdctlSeconds);
  const imageMedian = median(engineSeconds.image);
  const jitMedian = median(engineSeconds.jit);
  const restoreMedian = median(engineRestores);
  const etcdutlMedian = median(etcdutlRestores);
  const loadAfter = loadAverage();
  // Speed ratio as the issue states it: the engine's MB/s over etcdctl's (etcdctl's time over ours).
  say(
    `snapshot ${mb(snapshotBytes).toFixed(1)} MB, medians of ${runs}: ` +
      variants
        .map((v) => {
          const seconds = median(engineSeconds[v.key]);
          return `${v.label} ${seconds.toFixed(2)} s = ${(etcdctlMedian / seconds).toFixed(2)}x etcdctl's speed`;
        })
        .join('; ') +
      `; etcdctl ${etcdctlMedian.toFixed(2)} s`,
  );
  for (const v of variants) {
    say(
      `where ${v.label}'s time goes (medians): ` +
        [...enginePhases[v.key]].map(([phase, xs]) => `${phase} ${median(xs).toFixed(3)} s`).join(', '),
    );
  }
  say(
    `restore: engine ${restoreMedian.toFixed(2)} s, etcdutl ${etcdutlMedian.toFixed(2)} s = ` +
      `${(restoreMedian / etcdutlMedian).toFixed(2)}x etcdutl's time`,
  );
  say(`load average ${loadBefore} before, ${loadAfter} after`);
  process.stdout.write(
    `${JSON.stringify({
      db_mb: round(mb(dbBytes), 1),
      snapshot_mb: round(mb(snapshotBytes), 1),
      image_node_flags: operatorNodeFlags.join(' '),
      snapshot_seconds: round(imageMedian, 3),
      snapshot_jit_seconds: round(jitMedian, 3),
      etcdctl_seconds: round(etcdctlMedian, 3),
      snapshot_mb_per_s: round(mb(snapshotBytes) / imageMedian, 1),
      etcdctl_mb_per_s: round(mb(snapshotBytes) / etcdctlMedian, 1),
      snapshot_ratio: round(etcdctlMedian / imageMedian, 2),
      snapshot_jit_ratio: round(etcdctlMedian / jitMedian, 2),
      snapshot_phases_seconds: Object.fromEntries(
        [...enginePhases.image].map(([phase, xs]) => [phase, round(median(xs), 3)]),
      ),
      restore_seconds: round(restoreMedian, 2),
      etcdutl_restore_seconds: round(etcdutlMedian, 2),
      restore_time_ratio: round(restoreMedian / etcdutlMedian, 2),
      load_average_before: loadBefore,
      load_average_after: loadAfter,
    })}\n`,
  );
} finally {
  await teardown.run();
}
