// npm run bench:snapshot -- [--size-mb S] [--runs N]
// Fills one real etcd member to S MB (default 256; 16 under BENCH_SMOKE=1), then takes snapshots
// alternately with the engine (takeBackup into a file sink, hash checked while streaming) and with
// `etcdctl snapshot save`, N of each (default 3; 1 under BENCH_SMOKE=1), and restores alternately
// with the engine's steps (shape check, then the full hash beside etcdutl) and with plain `etcdutl snapshot restore`. Prints
// every run, then one JSON line with the medians. It prints figures; it asserts nothing about time.
// The engine runs in this process, with V8's JIT: Node strips TypeScript with WebAssembly, which
// --jitless turns off, so these .ts sources cannot run the way operator images run their bundle
// (operatorNodeFlags, ADR 0601). The JSON line says which it was (`jitless`).
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { execFile } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { promisify } from 'node:util';
import { binaryPath } from '@homeostat/testing';
import { startEtcdCluster } from '@homeostat/testing/etcd';
import {
  fileSnapshotSink,
  openClient,
  planRestore,
  readMemberStatus,
  runRestore,
  takeBackup,
  type EtcdConnection,
} from '@homeostat/etcd-operator';
import { sized } from '../support/bench-size.ts';
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
  const engineRates: number[] = [];
  const etcdctlRates: number[] = [];
  const engineFiles: string[] = [];
  for (let i = 0; i < runs; i++) {
    const [record, engineSeconds] = await timed(() =>
      takeBackup(connection, fileSnapshotSink(work), { name: `engine-${i}.db`, etcdutlPath: etcdutl }),
    );
    engineFiles.push(record.location);
    engineRates.push(mb(record.sizeBytes) / engineSeconds);
    say(
      `run ${i + 1} engine  snapshot: ${mb(record.sizeBytes).toFixed(1)} MB in ${engineSeconds.toFixed(2)} s ` +
        `= ${(mb(record.sizeBytes) / engineSeconds).toFixed(1)} MB/s (sha256 ${record.sha256.slice(0, 12)}…, revision ${record.revision})`,
    );
    const etcdctlFile = join(work, `etcdctl-${i}.db`);
    const [, etcdctlSeconds] = await timed(() =>
      run(etcdctl, [`--endpoints=${member.clientUrl}`, 'snapshot', 'save', etcdctlFile], {
        maxBuffer: 1 << 20,
      }),
    );
    const etcdctlBytes = (await stat(etcdctlFile)).size;
    etcdctlRates.push(mb(etcdctlBytes) / etcdctlSeconds);
    say(
      `run ${i + 1} etcdctl snapshot: ${mb(etcdctlBytes).toFixed(1)} MB in ${etcdctlSeconds.toFixed(2)} s ` +
        `= ${(mb(etcdctlBytes) / etcdctlSeconds).toFixed(1)} MB/s`,
    );
    await rm(etcdctlFile, { force: true });
  }

  const snapshot = engineFiles[0] ?? '';
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
    say(`run ${i + 1} engine  restore (verify beside etcdutl): ${engineSeconds.toFixed(2)} s`);
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

  const engineRate = median(engineRates);
  const etcdctlRate = median(etcdctlRates);
  process.stdout.write(
    `${JSON.stringify({
      db_mb: round(mb(dbBytes), 1),
      jitless: process.execArgv.includes('--jitless'),
      snapshot_mb_per_s: round(engineRate, 1),
      etcdctl_mb_per_s: round(etcdctlRate, 1),
      snapshot_ratio: round(engineRate / etcdctlRate, 2),
      restore_seconds: round(median(engineRestores), 2),
      etcdutl_restore_seconds: round(median(etcdutlRestores), 2),
    })}\n`,
  );
} finally {
  await teardown.run();
}
