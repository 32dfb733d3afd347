// npm run bench:backup -- [--size-mb S] [--rpo-seconds T] [--commits-per-second N]
//   [--archive-timeout-s A] [--process-max P] [--variants word,word]
// The PostgreSQL operator's backups (pgBackRest through the engine in operators/postgres/src/backup,
// to versitygw over TLS on loopback) against a plain pg_basebackup of the same PostgreSQL 15 in the
// same run. One database filled to S MB (default 1024; 32 under BENCH_SMOKE=1), then:
//   - pg_basebackup to a local directory, twice: uncompressed (-Fp), the floor of a copy, and as
//     tar with client-side zstd at level 3 (-Ft --compress=client-zstd:3);
//   - pg_basebackup -Ft -D - with client-side zstd at levels 3 and 1, streamed into the same bucket
//     over TLS (a multipart upload through the AWS SDK, stream-to-bucket.ts): the same compression
//     work as pgBackRest's, ending in the same place, the baseline the ratios are taken against;
//   - a full backup through takeBaseBackup with the engine's configuration, then one more full
//     backup per variant, each changing one thing (variantsToRun: the engine's settings before
//     ADR 0219, archive-check=n, a posix repository on local disk, the backup pod's path through
//     pgBackRest's TLS server, compress level and type, checksum-page=n, process-max P (default
//     2), repo1-bundle, the S3 upload chunk size); --variants runs only those whose names contain
//     one of the words. archive-check=n is a measurement only, never an engine setting;
//   - for each, wall-clock seconds and the CPU seconds the bench's whole process tree spent
//     meanwhile (PostgreSQL, pgBackRest, versitygw, the uploader): on a shared machine the wall
//     clock moves with other jobs' load, the CPU a piece of work burns much less;
//   - a restore of the engine's backup into a fresh data directory (restoreBackupFiles, then the
//     engine's recovery settings to the archive's end) until the server is promoted, rows checked;
//   - the RPO under a steady write load: archive_timeout A (default 10 s; 2 s in smoke), one writer
//     committing N times a second (default 20) for T seconds (default 30; 5 in smoke); sampled every
//     250 ms, the age of the archiver's last push (now - pg_stat_archiver.last_archived_time), and
//     for every commit the time until its WAL segment is an object in the bucket.
// Prints a readable summary on stderr and one JSON line on stdout; asserts nothing about time.
import { setTimeout as sleep } from 'node:timers/promises';
import { execFile, spawn } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { waitUntil } from '@homeostat/testing';
import { startS3Server, type S3TestServer } from '@homeostat/testing/s3';
import { withConnection, defaultConnectOptions } from '../../operators/postgres/src/instance/instance.ts';
import { recoverySettings } from '../../operators/postgres/src/backup/recovery-settings.ts';
import { writeRecoverySettings } from '../../operators/postgres/src/backup/restore.ts';
import {
  PlainPostgresBed,
  trustSuperuser,
  type PlainInstance,
} from '../../operators/postgres/src/test-support/plain-postgres.ts';
import { postgresBinDir } from '../../operators/postgres/src/test-support/postgres-processes.ts';
import { sized } from '../support/bench-size.ts';
import { loadAverage } from '../support/load-average.ts';
import { treeCpuSeconds } from '../support/tree-cpu.ts';
import { Teardown } from '../support/teardown.ts';
import { archived, one, query, startUntilPromoted, switchSegment, timed } from './plain-sql.ts';
import { pgBackRestTool, type BackupVariant } from './backup-tools.ts';
import { streamToBucket } from './stream-to-bucket.ts';

const { values } = parseArgs({
  options: {
    'size-mb': { type: 'string', default: sized('1024', '32') },
    'rpo-seconds': { type: 'string', default: sized('30', '5') },
    'commits-per-second': { type: 'string', default: '20' },
    'archive-timeout-s': { type: 'string', default: sized('10', '2') },
    'process-max': { type: 'string', default: '2' },
    // Only the variants whose names contain one of these comma-separated words (all when unset).
    // The smoke run proves the two other paths (a posix repository, the TLS server) still run.
    variants: { type: 'string', default: sized('', 'posix,TLS server') },
  },
});
const sizeMb = Number(values['size-mb']);
const rpoSeconds = Number(values['rpo-seconds']);
const commitsPerSecond = Number(values['commits-per-second']);
const archiveTimeoutS = Number(values['archive-timeout-s']);
const processMax = Number(values['process-max']);
const variantFilter = values.variants
  .split(',')
  .map((w) => w.trim())
  .filter((w) => w.length > 0);
const say = (line: string) => console.error(`bench:backup ${line}`);
const round = (x: number, digits = 2) => Number(x.toFixed(digits));
const mb = (bytes: number) => round(bytes / (1024 * 1024), 1);
const bucket = 'bench';
const run = promisify(execFile);

/** The work's result, its wall-clock seconds, and the CPU seconds the bench's process tree burnt meanwhile. */
async function measured<T>(work: () => Promise<T>): Promise<[T, number, number]> {
  const cpuBefore = treeCpuSeconds();
  const [result, seconds] = await timed(work);
  return [result, seconds, treeCpuSeconds() - cpuBefore];
}

function median(xs: readonly number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  if (sorted.length === 0) return Number.NaN;
  return sorted.length % 2 ? (sorted[mid] ?? Number.NaN) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

/** Names of the WAL segments pgBackRest has stored (versitygw's posix backend keeps each object as a file). */
async function segmentsInBucket(s3: S3TestServer, prefix: string): Promise<Set<string>> {
  const names = new Set<string>();
  const root = join(s3.rootDir, bucket, prefix);
  for (const entry of await readdir(root, { recursive: true, withFileTypes: true })) {
    // Objects are named <segment>-<sha1>[.zst]; a .partial or a .history file is not a segment.
    const match = /^([0-9A-F]{24})-[0-9a-f]{40}/.exec(entry.name);
    if (entry.isFile() && match?.[1]) names.add(match[1]);
  }
  return names;
}

/** pg_basebackup as the postgres user against the primary's socket; `--no-sync` as neither side waits for a disk flush. */
async function pgBaseBackup(bed: PlainPostgresBed, primary: PlainInstance, args: string[]): Promise<void> {
  const words = [
    ...bed.runAs,
    join(postgresBinDir, 'pg_basebackup'),
    '-h',
    primary.socketDir,
    '-p',
    String(primary.port),
    '-U',
    'postgres',
    // As pgBackRest's start-fast: no wait for a spread checkpoint.
    '--checkpoint=fast',
    '--no-sync',
    ...args,
  ];
  const [file, ...rest] = words;
  if (file === undefined) throw new Error('no command');
  await run(file, rest, { env: { PATH: '/usr/bin:/bin', LANG: 'C.UTF-8' }, maxBuffer: 16 << 20 });
}

/**
 * pg_basebackup's tar of the cluster (WAL fetched at its end, as a single tar on stdout needs)
 * with client-side zstd at `level`, streamed into the bucket: the same work as pgBackRest's
 * backup, ending in the same place. Resolves with the bytes stored.
 */
async function pgBaseBackupToBucket(
  bed: PlainPostgresBed,
  primary: PlainInstance,
  s3: S3TestServer,
  level: number,
): Promise<number> {
  const [file, ...rest] = [
    ...bed.runAs,
    join(postgresBinDir, 'pg_basebackup'),
    ...['-h', primary.socketDir, '-p', String(primary.port), '-U', 'postgres'],
    ...['--checkpoint=fast', '-Ft', '-Xfetch', '-D', '-', `--compress=client-zstd:${level}`],
  ];
  if (file === undefined) throw new Error('no command');
  const child = spawn(file, rest, {
    env: { PATH: '/usr/bin:/bin', LANG: 'C.UTF-8' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  const stored = await streamToBucket(s3, bucket, `basebackup/zstd-${level}.tar.zst`, child.stdout);
  const code = await exited;
  if (code !== 0) throw new Error(`pg_basebackup to stdout exited ${String(code)}: ${stderr.trim()}`);
  return stored;
}

interface NamedVariant extends BackupVariant {
  readonly name: string;
}

// What each variant isolates, against the engine's own backup just before them. archive-check=n
// is only ever a measurement here: a posix repository of its own has no archive to wait for, so
// its S3 twin skips the wait too and the pair differs by the object store alone.
const variantsToRun: readonly NamedVariant[] = [
  {
    name: 'the engine before 2026-11-27: compress-level=3, repo1-bundle=n',
    options: { 'compress-level': '3', 'repo1-bundle': 'n' },
  },
  { name: 'archive-check=n (no wait for the WAL)', options: { 'archive-check': 'n' } },
  { name: 'posix repository, archive-check=n', repository: 'posix', options: { 'archive-check': 'n' } },
  { name: 'over the TLS server (the backup pod\u2019s path)', remote: true },
  { name: 'compress-level=3 (zstd\u2019s default)', options: { 'compress-level': '3' } },
  { name: 'compress-level=1', options: { 'compress-level': '1' } },
  { name: 'compress-type=lz4', options: { 'compress-type': 'lz4', 'compress-level': '1' } },
  { name: 'compress-type=none', options: { 'compress-type': 'none', 'compress-level': '0' } },
  { name: 'checksum-page=n', options: { 'checksum-page': 'n' } },
  { name: `process-max=${processMax}`, options: { 'process-max': String(processMax) } },
  { name: 'repo1-bundle=y', options: { 'repo1-bundle': 'y' } },
  { name: 'repo1-storage-upload-chunk-size=16MiB', options: { 'repo1-storage-upload-chunk-size': '16MiB' } },
  {
    name: 'compress-level=1, repo1-bundle=y, chunk 16MiB',
    options: { 'compress-level': '1', 'repo1-bundle': 'y', 'repo1-storage-upload-chunk-size': '16MiB' },
  },
  {
    name: 'compress-level=1, repo1-bundle=y, chunk 16MiB, over the TLS server',
    remote: true,
    options: { 'compress-level': '1', 'repo1-bundle': 'y', 'repo1-storage-upload-chunk-size': '16MiB' },
  },
  {
    name: 'posix, none, checksum-page=n, archive-check=n (the copy and its SHA-1 alone)',
    repository: 'posix',
    options: { 'compress-type': 'none', 'compress-level': '0', 'checksum-page': 'n', 'archive-check': 'n' },
  },
];
const baselineLevels = [3, 1];

interface RpoFigures {
  commits: number;
  archiverAgeSeconds: { samples: number; median: number; max: number };
  commitToBucketSeconds: { median: number; max: number };
}

/**
 * A writer at `commitsPerSecond` for `rpoSeconds` while two samplers run: the archiver's age
 * every 250 ms, and the bucket's segments every 100 ms (to see when each commit's segment lands).
 */
async function measureRpo(s3: S3TestServer, primary: PlainInstance, walPrefix: string): Promise<RpoFigures> {
  await query(
    primary,
    'CREATE TABLE ticks(id bigserial PRIMARY KEY, at timestamptz DEFAULT clock_timestamp())',
  );
  const commits: { at: number; segment: string }[] = [];
  const arrivals = new Map<string, number>();
  for (const name of await segmentsInBucket(s3, walPrefix)) arrivals.set(name, 0);
  const ages: number[] = [];
  let writing = true;
  let watching = true;

  const writer = withConnection(primary, trustSuperuser, defaultConnectOptions, async (c) => {
    const start = performance.now();
    for (let i = 0; performance.now() - start < rpoSeconds * 1000; i++) {
      const due = start + (i * 1000) / commitsPerSecond;
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait);
      // The insert position after the row: its commit record follows it, in the same segment
      // unless the row ended exactly at a boundary (then the figure is one segment optimistic).
      const { rows } = await c.query<{ w: string }>(
        'INSERT INTO ticks DEFAULT VALUES RETURNING pg_walfile_name(pg_current_wal_insert_lsn()) AS w',
      );
      const segment = rows[0]?.w;
      if (segment) commits.push({ at: performance.now(), segment });
    }
    writing = false;
  });
  const ageSampler = withConnection(primary, trustSuperuser, defaultConnectOptions, async (c) => {
    while (writing) {
      const { rows } = await c.query<{ age: number | null }>(
        'SELECT extract(epoch FROM clock_timestamp() - last_archived_time)::float8 AS age FROM pg_stat_archiver',
      );
      const age = rows[0]?.age;
      if (typeof age === 'number') ages.push(age);
      await sleep(250);
    }
  });
  const bucketWatcher = (async () => {
    while (watching) {
      for (const name of await segmentsInBucket(s3, walPrefix)) {
        if (!arrivals.has(name)) arrivals.set(name, performance.now());
      }
      await sleep(100);
    }
  })();
  try {
    await Promise.all([writer, ageSampler]);
    const last = commits[commits.length - 1]?.segment;
    // archive_timeout switches the last, partly written segment; it must then reach the bucket.
    if (last) {
      await waitUntil('the last commit\u2019s segment in the bucket', async () => arrivals.has(last), {
        timeoutMs: (archiveTimeoutS * 3 + 60) * 1000,
        intervalMs: 100,
      });
    }
  } finally {
    watching = false;
    await bucketWatcher;
  }
  const lags = commits.map((c) => (arrivals.get(c.segment) ?? Number.NaN) - c.at).map((ms) => ms / 1000);
  return {
    commits: commits.length,
    archiverAgeSeconds: { samples: ages.length, median: round(median(ages)), max: round(Math.max(...ages)) },
    commitToBucketSeconds: { median: round(median(lags)), max: round(Math.max(...lags)) },
  };
}

const teardown = new Teardown();
teardown.exitOnSignals('bench:backup');
try {
  const loadBefore = loadAverage();
  const s3 = await startS3Server({ buckets: [bucket], tls: true });
  teardown.add('versitygw', () => s3.stop());
  const bed = new PlainPostgresBed('pg-bench-backup');
  teardown.add('the PostgreSQL bed', () => bed.cleanup());
  const dataDir = bed.initdb('primary');
  const address = await bed.address('primary');
  const tool = await pgBackRestTool(bed, s3, bucket, { dataDir, ...address });
  teardown.add('the pgBackRest server', () => tool.stop());
  const primary = await bed.start('primary', dataDir, {
    address,
    settings: {
      archive_mode: 'on',
      archive_command: tool.archiveCommand,
      archive_timeout: `${archiveTimeoutS}s`,
      wal_level: 'replica',
      max_wal_size: '4GB',
    },
    env: tool.serverEnv,
  });
  await tool.prepare();

  say(`pgBackRest ${tool.version}: filling ${sizeMb} MB`);
  const rowsPerMb = 7700; // about 136 bytes a row with its header and alignment (as bench:backup-tools)
  const rows = sizeMb * rowsPerMb;
  await query(
    primary,
    `CREATE TABLE fill AS SELECT g AS id, md5(g::text) AS a, md5((g * 7)::text) AS b, md5((g * 13)::text) AS c
       FROM generate_series(1, ${rows}) g`,
  );
  await query(primary, 'CHECKPOINT');
  // What both tools copy: every database of the cluster (template ones included), not the WAL.
  const clusterBytes = Number(
    (await one<{ s: string }>(primary, 'SELECT sum(pg_database_size(oid))::bigint AS s FROM pg_database')).s,
  );
  // The fill's WAL must be pushed before anything is timed, or the archiver would share the CPU.
  await archived(primary, await switchSegment(primary), 1_800_000);
  const perSecond = (seconds: number) => round(mb(clusterBytes) / seconds, 1);

  const cpu = (seconds: number) => `${round(seconds, 1)} CPU s`;
  const [, plainSeconds, plainCpu] = await measured(() =>
    pgBaseBackup(bed, primary, ['-D', bed.directory('basebackup-plain'), '-Fp']),
  );
  say(
    `pg_basebackup -Fp (uncompressed): ${round(plainSeconds)} s, ${perSecond(plainSeconds)} MB/s, ${cpu(plainCpu)}`,
  );
  const [, zstdSeconds, zstdCpu] = await measured(() =>
    pgBaseBackup(bed, primary, ['-D', bed.directory('basebackup-zstd'), '-Ft', '--compress=client-zstd:3']),
  );
  say(
    `pg_basebackup -Ft client-zstd:3 to local disk: ${round(zstdSeconds)} s, ${perSecond(zstdSeconds)} MB/s, ` +
      cpu(zstdCpu),
  );
  // The same work ending where pgBackRest's ends: one tar streamed into the bucket over TLS.
  const toBucket = [];
  for (const level of baselineLevels) {
    const [stored, seconds, cpuSeconds] = await measured(() => pgBaseBackupToBucket(bed, primary, s3, level));
    say(
      `pg_basebackup -Ft -D - client-zstd:${level} | upload to the bucket: ${round(seconds)} s, ` +
        `${perSecond(seconds)} MB/s, ${cpu(cpuSeconds)}, ${mb(stored)} MB stored`,
    );
    toBucket.push({
      level,
      seconds: round(seconds),
      mbPerSecond: perSecond(seconds),
      cpuSeconds: round(cpuSeconds, 1),
      storedMb: mb(stored),
    });
  }
  const zstdToBucketSeconds = toBucket[0]?.seconds ?? Number.NaN;
  const [label, engineSeconds, engineCpu] = await measured(() => tool.backup());
  say(
    `pgBackRest full (the engine's configuration): ${round(engineSeconds)} s, ${perSecond(engineSeconds)} MB/s, ` +
      cpu(engineCpu),
  );
  // Each variant is one more full backup of the same database: what one change costs or buys.
  const variants = [];
  const chosen = variantsToRun.filter(
    (v) => variantFilter.length === 0 || variantFilter.some((w) => v.name.includes(w)),
  );
  for (const variant of chosen) {
    const [, seconds, cpuSeconds] = await measured(() => tool.backupWith(variant));
    // pgBackRest's TLS server does not wait for the children it forks per connection, so the
    // CPU they spend (reading and compressing, on the instance's side) never reaches this count.
    const uncounted = variant.remote ? ' (without the TLS server\u2019s side)' : '';
    say(
      `pgBackRest full, ${variant.name}: ${round(seconds)} s, ${perSecond(seconds)} MB/s, ` +
        `${cpu(cpuSeconds)}${uncounted}`,
    );
    variants.push({
      variant: variant.name,
      seconds: round(seconds),
      mbPerSecond: perSecond(seconds),
      cpuSeconds: round(cpuSeconds, 1),
      ...(variant.remote ? { cpuWithoutTheServersSide: true } : {}),
    });
  }
  const ratio = (theirs: number, ours: number) => round(theirs / ours, 2);

  // The restore: the engine's backup's files, then its recovery settings (replay to the archive's
  // end, promote), as the operator's restore does it.
  const restoreDir = bed.directory('restored-data');
  const [, filesSeconds] = await timed(() => tool.restoreFiles(label, restoreDir));
  await writeRecoverySettings(
    restoreDir,
    recoverySettings({ type: 'latest' }, { configFile: tool.configFile, stanza: tool.stanza }, restoreDir),
  );
  const [restored, replaySeconds] = await timed(() => startUntilPromoted(bed, restoreDir, tool.serverEnv));
  const restoredRows = Number((await one<{ n: string }>(restored, 'SELECT count(*) AS n FROM fill')).n);
  // Stopped now so that it takes no CPU from the RPO phase.
  await restored.process.stop(5000);
  say(
    `restore: files ${round(filesSeconds)} s, replay to promotion ${round(replaySeconds)} s, ` +
      `${restoredRows === rows ? 'all' : `${restoredRows} of`} ${rows} rows`,
  );

  say(`RPO: ${commitsPerSecond} commits/s for ${rpoSeconds} s, archive_timeout ${archiveTimeoutS} s`);
  const rpo = await measureRpo(s3, primary, tool.walPrefix);
  say(
    `RPO: archiver age median ${rpo.archiverAgeSeconds.median} s, max ${rpo.archiverAgeSeconds.max} s; ` +
      `commit to bucket median ${rpo.commitToBucketSeconds.median} s, max ${rpo.commitToBucketSeconds.max} s`,
  );

  const figures = {
    bench: 'backup',
    sizeMb,
    clusterMb: mb(clusterBytes),
    pgBackRest: tool.version,
    loadAverage: { before: loadBefore, after: loadAverage() },
    pgBaseBackup: {
      plain: {
        seconds: round(plainSeconds),
        mbPerSecond: perSecond(plainSeconds),
        cpuSeconds: round(plainCpu, 1),
      },
      zstd: {
        seconds: round(zstdSeconds),
        mbPerSecond: perSecond(zstdSeconds),
        cpuSeconds: round(zstdCpu, 1),
      },
      zstdToBucket: toBucket,
    },
    pgBackRestFull: {
      seconds: round(engineSeconds),
      mbPerSecond: perSecond(engineSeconds),
      cpuSeconds: round(engineCpu, 1),
    },
    // The same full backup changed one way, and its ratio against pg_basebackup zstd:3 into the bucket.
    pgBackRestVariants: variants.map((v) => ({
      ...v,
      ratioAgainstZstdToBucket: ratio(zstdToBucketSeconds, v.seconds),
    })),
    // Throughput of pgBackRest over pg_basebackup's (the issue asks for at least 0.9).
    ratio: {
      againstZstdToBucket: ratio(zstdToBucketSeconds, engineSeconds),
      againstZstdToLocalDisk: ratio(zstdSeconds, engineSeconds),
      againstPlain: ratio(plainSeconds, engineSeconds),
    },
    restore: {
      filesSeconds: round(filesSeconds),
      replayToPromotionSeconds: round(replaySeconds),
      totalSeconds: round(filesSeconds + replaySeconds),
      allRows: restoredRows === rows,
    },
    rpo: { commitsPerSecond, seconds: rpoSeconds, archiveTimeoutSeconds: archiveTimeoutS, ...rpo },
  };
  say(
    `ratio pgBackRest/pg_basebackup throughput (target 0.9): ${figures.ratio.againstZstdToBucket} against ` +
      `zstd:3 into the bucket, ${figures.ratio.againstZstdToLocalDisk} against zstd:3 to local disk, ` +
      `${figures.ratio.againstPlain} against uncompressed`,
  );
  process.stdout.write(`${JSON.stringify(figures)}\n`);
} finally {
  await teardown.run();
}
