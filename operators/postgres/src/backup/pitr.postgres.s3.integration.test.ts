// The backup engine end to end against real things: PostgreSQL 15 archiving every segment through
// pgBackRest into versitygw (S3 over TLS on loopback), a base backup, rows written after it, and
// a restore to a moment between two of them into a fresh data directory that starts and holds
// exactly the rows committed before that moment.
import { setTimeout as sleep } from 'node:timers/promises';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startS3Server, type S3TestServer } from '@homeostat/testing/s3';
import { waitUntil } from '@homeostat/testing';
import { withConnection, defaultConnectOptions } from '../instance/instance.ts';
import { switchAndAwaitArchive } from '../instance/archive-position.ts';
import { PlainPostgresBed, trustSuperuser, type PlainInstance } from '../test-support/plain-postgres.ts';
import { pgBackRestRepository, type RepositoryFixture } from '../test-support/pgbackrest-fixture.ts';
import { ensureStanza, takeBaseBackup } from './base-backup.ts';
import { BackupToolError, type PgBackRestInvocation } from './pgbackrest-cli.ts';
import { renderCredentialsConfig } from './pgbackrest-config.ts';
import { archiveEndTime, readRepository, type BackupRecord } from './repository-info.ts';
import { planRecovery } from './recovery-target.ts';
import { recoverySettings } from './recovery-settings.ts';
import { restoreBackupFiles, writeRecoverySettings } from './restore.ts';
import { applyRetention } from './retention.ts';

const sql = <T>(instance: PlainInstance, work: (c: pg.Client) => Promise<T>) =>
  withConnection(instance, trustSuperuser, defaultConnectOptions, work);

/** Switches to a new segment and waits until the archiver has pushed the one it closed. */
async function archiveCurrentSegment(instance: PlainInstance): Promise<void> {
  await switchAndAwaitArchive(instance, trustSuperuser, defaultConnectOptions, 60_000);
}

async function insert(instance: PlainInstance, label: string): Promise<void> {
  await sql(instance, (c) => c.query('INSERT INTO marks(label) VALUES ($1)', [label]));
}

async function serverNow(instance: PlainInstance): Promise<Date> {
  return sql(instance, async (c) => {
    const r = await c.query<{ now: Date }>('SELECT clock_timestamp() AS now');
    const now = r.rows[0]?.now;
    if (!now) throw new Error('no clock_timestamp()');
    return now;
  });
}

describe('pgBackRest to S3: archive, base backup, point-in-time restore', () => {
  let s3: S3TestServer;
  let bed: PlainPostgresBed;
  let primary: PlainInstance;
  let repo: RepositoryFixture;
  let backup: BackupRecord;
  let between: Date;

  beforeAll(async () => {
    s3 = await startS3Server({ buckets: ['pg-backups'], tls: true });
    bed = new PlainPostgresBed('pg-pitr');
    const dataDir = bed.initdb('primary');
    const address = await bed.address('primary');
    repo = pgBackRestRepository(bed, s3, {
      bucket: 'pg-backups',
      prefix: 'prod/cluster-a/',
      stanza: 'cluster-a',
      dataDir,
      ...address,
    });
    primary = await bed.start('primary', dataDir, {
      address,
      settings: { ...repo.archiveSettings, archive_timeout: '60s' },
      env: repo.serverEnv,
    });
    await ensureStanza(repo.invocation);
    await sql(primary, (c) =>
      c.query('CREATE TABLE marks(label text PRIMARY KEY, at timestamptz DEFAULT clock_timestamp())'),
    );
    await insert(primary, 'before-backup');
    backup = await takeBaseBackup(repo.invocation);
    await insert(primary, 'after-backup');
    // Commit times have microseconds; a gap on both sides keeps the target clear of either commit.
    await sleep(1100);
    between = await serverNow(primary);
    await sleep(1100);
    await insert(primary, 'after-target');
    await archiveCurrentSegment(primary);
  });

  afterAll(async () => {
    await bed?.cleanup();
    await s3?.stop();
  });

  it('records the base backup with its label, LSNs, times and sizes', async () => {
    expect(backup.label).toMatch(/^\d{8}-\d{6}F$/);
    expect(backup.type).toBe('full');
    expect(backup.endLsn).toBeGreaterThan(backup.beginLsn);
    expect(backup.stopTime.getTime()).toBeGreaterThanOrEqual(backup.startTime.getTime());
    expect(backup.databaseBytes).toBeGreaterThan(10_000_000);
    // zstd-compressed in the bucket: a fraction of the database.
    expect(backup.storedBytes).toBeGreaterThan(0);
    expect(backup.storedBytes).toBeLessThan(backup.databaseBytes);
    const listed = await readRepository(repo.invocation);
    expect(listed.backups.map((b) => b.label)).toEqual([backup.label]);
    expect((listed.archive?.firstSegment ?? '~').slice(0, 24) <= backup.walStart).toBe(true);
  });

  it('restores to a time between two commits: the server starts with exactly the rows before it', async () => {
    const repository = await readRepository(repo.invocation);
    const archivedUntil = await archiveEndTime(repo.invocation);
    expect(archivedUntil?.getTime()).toBeGreaterThan(between.getTime());
    const plan = planRecovery(repository, { type: 'time', time: between }, { time: archivedUntil });
    expect(plan).toMatchObject({ ok: true, backup: { label: backup.label } });
    if (!plan.ok) return;
    const dataDir = bed.directory('restored-data');
    await restoreBackupFiles(repo.invocation, plan.backup, dataDir);
    const target = { configFile: repo.invocation.configFile, stanza: repo.invocation.stanza };
    await writeRecoverySettings(dataDir, recoverySettings({ type: 'time', time: between }, target, dataDir));
    // A restored cluster must not archive into its source's repository.
    const restored = await bed.start('restored', dataDir, {
      settings: { archive_mode: 'off' },
      env: repo.serverEnv,
    });
    await waitUntil(
      'the restored server promoted at the target',
      async () =>
        sql(
          restored,
          async (c) =>
            (await c.query<{ r: boolean }>('SELECT pg_is_in_recovery() AS r')).rows[0]?.r === false,
        ),
      { timeoutMs: 60_000, intervalMs: 200 },
    );
    const rows = await sql(
      restored,
      async (c) => (await c.query<{ label: string }>('SELECT label FROM marks ORDER BY at')).rows,
    );
    expect(rows.map((r) => r.label)).toEqual(['before-backup', 'after-backup']);
    await restored.stop();
  });

  it('refuses a target before the first backup ended, saying so', async () => {
    const repository = await readRepository(repo.invocation);
    const early = new Date(backup.startTime.getTime() - 60_000);
    const plan = planRecovery(repository, { type: 'time', time: early });
    expect(plan.ok).toBe(false);
    if (plan.ok) return;
    expect(plan.message).toContain(`before the first backup (${backup.label}) ended`);
    expect(plan.message).toContain(early.toISOString());
  });

  it('a wrong secret key fails with an error that names the cause and not the key', async () => {
    const wrongSecret = `wrong-${randomBytes(16).toString('hex')}`;
    const wrong = repo.withCredentials({
      accessKeyId: repo.credentials.accessKeyId,
      secretAccessKey: wrongSecret,
    });
    const failure = await readRepositoryOrError(wrong);
    expect(failure).toBeInstanceOf(BackupToolError);
    const message = failure instanceof Error ? failure.message : '';
    expect(message).toContain('403');
    expect(message).not.toContain(wrongSecret);
    expect(message).not.toContain(repo.credentials.accessKeyId);
    expect(message).not.toContain(repo.credentials.secretAccessKey);
    // A backup with it fails the same way, before touching anything.
    const backupFailure = await takeBaseBackup(wrong).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(backupFailure).toBeInstanceOf(BackupToolError);
    expect(String(backupFailure)).not.toContain(wrongSecret);
    expect(String(backupFailure)).not.toContain(repo.credentials.accessKeyId);
  });

  it('reads the credentials from a file in the include path as well as from the environment', async () => {
    const includeDir = bed.directory('credentials');
    const file = join(includeDir, 'credentials.conf');
    writeFileSync(file, renderCredentialsConfig(repo.credentials), { mode: 0o600 });
    bed.own(file);
    const fromFile: PgBackRestInvocation = {
      ...repo.invocation,
      configIncludePath: includeDir,
      credentialsFrom: 'include-path',
    };
    expect((await readRepository(fromFile)).backups.map((b) => b.label)).toContain(backup.label);
    // Without the file the same invocation has no credentials at all, so the file is what worked.
    const withoutFile = { ...fromFile, configIncludePath: bed.directory('no-credentials') };
    await expect(readRepository(withoutFile)).rejects.toThrow(BackupToolError);
  });

  it('retention removes the older backup and only the WAL no kept backup needs', async () => {
    await insert(primary, 'before-second-backup');
    const second = await takeBaseBackup(repo.invocation);
    const before = await readRepository(repo.invocation);
    expect(before.backups.map((b) => b.label)).toEqual([backup.label, second.label]);
    expect(await applyRetention(repo.invocation, { keepLast: 1 })).toEqual([backup.label]);
    const after = await readRepository(repo.invocation);
    expect(after.backups.map((b) => b.label)).toEqual([second.label]);
    // The archive now starts exactly where the kept backup's WAL starts: nothing it needs went.
    expect(after.archive?.firstSegment.slice(0, 24)).toBe(second.walStart);
    expect((before.archive?.firstSegment ?? '~').slice(0, 24) < second.walStart).toBe(true);
  });
});

function readRepositoryOrError(invocation: Parameters<typeof readRepository>[0]): Promise<unknown> {
  return readRepository(invocation).then(
    () => undefined,
    (e: unknown) => e,
  );
}
