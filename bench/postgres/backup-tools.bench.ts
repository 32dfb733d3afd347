// npm run bench:backup-tools -- [--size-mb S]
// pgBackRest (through the operator's engine) and Barman Cloud side by side, each against its own
// fresh PostgreSQL 15 and the same versitygw over TLS on loopback (ADR 0212 chose by these
// figures). Per tool: fill a database to S MB (default 200; 5 under BENCH_SMOKE=1) with archiving
// paused, then turn archive_command on and time how long the filled WAL takes to reach the bucket
// (per segment and MB/s); a full base backup (time, bytes stored); rows on both sides of a
// moment; a restore to that moment into a fresh data directory (the backup's files, then replay
// to promotion), checked to hold exactly the rows before it; and what a wrong secret key prints.
// Prints figures and one JSON line; asserts nothing about time.
import { setTimeout as sleep } from 'node:timers/promises';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startS3Server, type S3TestServer } from '@homeostat/testing/s3';
import { recoverySettings } from '../../operators/postgres/src/backup/recovery-settings.ts';
import { writeRecoverySettings } from '../../operators/postgres/src/backup/restore.ts';
import { PlainPostgresBed } from '../../operators/postgres/src/test-support/plain-postgres.ts';
import { sized } from '../support/bench-size.ts';
import { loadAverage } from '../support/load-average.ts';
import { Teardown } from '../support/teardown.ts';
import { archived, one, query, startUntilPromoted, switchSegment, timed } from './plain-sql.ts';
import { barmanCloudTool, pgBackRestTool, type BackupTool, type Primary } from './backup-tools.ts';

const { values } = parseArgs({ options: { 'size-mb': { type: 'string', default: sized('200', '5') } } });
const sizeMb = Number(values['size-mb']);
const say = (line: string) => console.error(`bench:backup-tools ${line}`);
const round = (x: number, digits = 2) => Number(x.toFixed(digits));
const mb = (bytes: number) => round(bytes / (1024 * 1024), 1);
const bucket = 'bench';

/** Bytes of every object under `prefix` in the bucket (versitygw's posix backend keeps each as a file). */
async function storedBytes(s3: S3TestServer, prefix: string): Promise<number> {
  let total = 0;
  const root = join(s3.rootDir, bucket, prefix);
  for (const entry of await readdir(root, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) total += (await stat(join(entry.parentPath, entry.name))).size;
  }
  return total;
}

/** A segment's position in 16 MiB steps (256 per "log id"). */
const segmentIndex = (name: string) =>
  parseInt(name.slice(8, 16), 16) * 256 + parseInt(name.slice(16, 24), 16);

async function measure(
  s3: S3TestServer,
  teardown: Teardown,
  make: (bed: PlainPostgresBed, primary: Primary) => Promise<BackupTool>,
) {
  const bed = new PlainPostgresBed('pg-bench-backup');
  teardown.add('the PostgreSQL bed', () => bed.cleanup());
  const dataDir = bed.initdb('primary');
  const address = await bed.address('primary');
  const tool = await make(bed, { dataDir, ...address });
  say(`${tool.name} ${tool.version}: filling ${sizeMb} MB with archiving paused`);
  // An empty archive_command (the default) with archive_mode on makes the archiver wait: the WAL
  // of the fill piles up, and turning the command on later (ALTER SYSTEM, then a reload) times the
  // tool alone. Not set with -c: a command-line setting would win over ALTER SYSTEM.
  const primary = await bed.start('primary', dataDir, {
    address,
    settings: {
      archive_mode: 'on',
      wal_level: 'replica',
      max_wal_size: '4GB',
      archive_timeout: '0',
    },
    env: tool.serverEnv,
  });
  await tool.prepare();
  const rowsPerMb = 7700; // about 136 bytes a row with its header and alignment
  await query(
    primary,
    `CREATE TABLE fill AS SELECT g AS id, md5(g::text) AS a, md5((g * 7)::text) AS b, md5((g * 13)::text) AS c
       FROM generate_series(1, ${sizeMb * rowsPerMb}) g`,
  );
  await query(
    primary,
    'CREATE TABLE marks(label text PRIMARY KEY, at timestamptz DEFAULT clock_timestamp())',
  );
  const databaseBytes = Number(
    (await one<{ s: string }>(primary, 'SELECT pg_database_size(current_database()) AS s')).s,
  );
  const lastPending = await switchSegment(primary);
  // Archiving was paused from the first segment on: every one up to the switched one waits.
  const segments = segmentIndex(lastPending) - segmentIndex('000000010000000000000001') + 1;
  await query(primary, `ALTER SYSTEM SET archive_command = '${tool.archiveCommand.replaceAll("'", "''")}'`);
  const [, archiveSeconds] = await timed(async () => {
    await query(primary, 'SELECT pg_reload_conf()');
    await archived(primary, lastPending, 1_800_000);
  });
  const walBytes = await storedBytes(s3, tool.walPrefix);
  say(`${tool.name}: ${segments} segments archived in ${round(archiveSeconds)} s`);

  await query(primary, "INSERT INTO marks(label) VALUES ('before-backup')");
  const [backupId, backupSeconds] = await timed(() => tool.backup());
  const backupBytes = await storedBytes(s3, tool.backupPrefix);
  say(`${tool.name}: base backup ${backupId} in ${round(backupSeconds)} s, ${mb(backupBytes)} MB stored`);

  await query(primary, "INSERT INTO marks(label) VALUES ('after-backup')");
  await sleep(1100);
  const target = (await one<{ now: Date }>(primary, 'SELECT clock_timestamp() AS now')).now;
  await sleep(1100);
  await query(primary, "INSERT INTO marks(label) VALUES ('after-target')");
  await archived(primary, await switchSegment(primary), 600_000);

  const restoreDir = bed.directory('restored-data');
  const [, filesSeconds] = await timed(() => tool.restoreFiles(backupId, restoreDir));
  const settings = new Map(
    recoverySettings({ type: 'time', time: target }, { configFile: '', stanza: '' }, restoreDir),
  );
  settings.set('restore_command', tool.restoreCommand(restoreDir));
  await writeRecoverySettings(restoreDir, settings);
  const [restored, replaySeconds] = await timed(() => startUntilPromoted(bed, restoreDir, tool.serverEnv));
  const rows = (await query<{ label: string }>(restored, 'SELECT label FROM marks ORDER BY at')).map(
    (r) => r.label,
  );
  const correct = rows.join(',') === 'before-backup,after-backup';
  say(
    `${tool.name}: restore files ${round(filesSeconds)} s, replay to promotion ${round(replaySeconds)} s, rows ${rows.join(',')}`,
  );
  const wrongSecret = await tool.wrongSecret();
  await bed.cleanup();
  return {
    tool: tool.name,
    version: tool.version,
    databaseMb: mb(databaseBytes),
    archive: {
      segments,
      seconds: round(archiveSeconds),
      msPerSegment: round((archiveSeconds * 1000) / segments, 1),
      mbPerSecond: round((segments * 16) / archiveSeconds, 1),
      storedMb: mb(walBytes),
    },
    baseBackup: { seconds: round(backupSeconds), storedMb: mb(backupBytes) },
    pointInTimeRestore: {
      filesSeconds: round(filesSeconds),
      replayToPromotionSeconds: round(replaySeconds),
      totalSeconds: round(filesSeconds + replaySeconds),
      rowsAsOfTarget: correct,
    },
    wrongSecret,
  };
}

const teardown = new Teardown();
teardown.exitOnSignals('bench:backup-tools');
try {
  const s3 = await startS3Server({ buckets: [bucket], tls: true });
  teardown.add('versitygw', () => s3.stop());
  const loadBefore = loadAverage();
  const results = [];
  for (const make of [pgBackRestTool, barmanCloudTool]) {
    results.push(await measure(s3, teardown, (bed, primary) => make(bed, s3, bucket, primary)));
  }
  const figures = {
    bench: 'backup-tools',
    sizeMb,
    loadAverage: { before: loadBefore, after: loadAverage() },
    results,
  };
  process.stdout.write(`${JSON.stringify(figures)}\n`);
} finally {
  await teardown.run();
}
