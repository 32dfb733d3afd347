// Scheduled backups and retention end to end: a real kube-apiserver + etcd, the operator with its
// schedule's clock stopped and moved on by the test (every five minutes by cron), a real
// PostgreSQL per instance pod with pgBackRest's TLS server, the backup and expire pods run as their
// entrypoint would run in them, and versitygw over TLS, whose rootDir is read as the repository.
// keepLast 2: after four scheduled runs and one backup by hand, the repository lists exactly the
// two newest scheduled backups and the one by hand, as do the PostgreSQLBackups; the WAL only the
// expired ones needed is gone, and the WAL from the oldest backup left on is all there. A backup a
// restore drill is restoring (its pod held unstarted, as a slow drill would be) is kept by the
// retention that would expire it, the drill records its verdict on it, and the retention after the
// next scheduled backup expires it.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { logTail, waitUntil } from '@homeostat/testing';
import { sharedKubeConfig } from '@homeostat/testing/shared';
import { scheduleDecision, scheduledName } from '@homeostat/operator-kit/schedule';
import { builtin, findCondition, KubeClient, type Condition } from '@homeostat/reconcile';
import { memoryLogger } from '@homeostat/reconcile/testing';
import { postgresBackups, type PostgresBackup } from '../../api/postgres-backup-types.ts';
import { postgresClusters } from '../../api/postgres-cluster-types.ts';
import { defaultConnectOptions, withConnection } from '../../instance/instance.ts';
import {
  archivedSegments,
  backupInfoLabels,
  createBackup,
  finishedBackup,
  repositoryBackupLabels,
  startBackupCluster,
  type BackupCluster,
} from '../../test-support/backup-cluster.ts';
import { PodProcesses } from '../../test-support/pod-processes.ts';
import { clusterReader } from '../../test-support/pod-cluster.ts';
import { drilledBackupAnnotation, drillSelector } from './drill-pod.ts';

const kubeConfig = sharedKubeConfig();
const namespace = `pg-schedule-${process.pid}`;
const cluster = 'orders';
const client = new KubeClient(kubeConfig, { fieldManager: 'test-user' });
const { log, lines } = memoryLogger();
const { get, slow } = clusterReader(client, namespace, cluster, lines);

/** The schedule's clock: stopped, moved to the next five-minute cron time by the test. */
let now = new Date();
const fiveMinutes = 5 * 60_000;
/** The restore drills' clock: the real one until a test moves it past a drill's cron time. */
let drillClockOffsetMs = 0;

describe('scheduled PostgreSQLBackups and retention: real API server, PostgreSQL, pgBackRest, S3', () => {
  const pods = new PodProcesses(client, namespace, cluster);
  let bed: BackupCluster;
  let tick = 0;

  const write = async (rows: number) => {
    const primary = (await get()).status?.currentPrimary ?? '';
    await withConnection(pods.endpoint(primary), pods.bed.superuser, defaultConnectOptions, async (c) => {
      await c.query('CREATE TABLE IF NOT EXISTS entries(id bigserial PRIMARY KEY, note text)');
      await c.query(`INSERT INTO entries(note) SELECT 'row ' || g FROM generate_series(1, ${rows}) g`);
      // A segment of its own between backups, so each backup's WAL is told apart in the archive.
      await c.query('SELECT pg_switch_wal()');
    });
  };

  /** Moves the clock to the next cron time, wakes the schedule, and returns that run once finished. */
  const nextRun = async (): Promise<PostgresBackup> => {
    now = new Date(now.getTime() + fiveMinutes);
    const due = new Date(Math.floor(now.getTime() / fiveMinutes) * fiveMinutes);
    await client.patch(postgresClusters, cluster, namespace, {
      metadata: { annotations: { 'test.homeostat.dev/tick': String(++tick) } },
    });
    const backup = await finishedBackup(client, namespace, scheduledName(cluster, due), slow);
    expect(backup.status?.phase, JSON.stringify(backup.status?.conditions)).toBe('Succeeded');
    return backup;
  };

  /** Waits for the schedule's retention after `backup` and returns its Retention condition. */
  const retentionAfter = async (backup: PostgresBackup): Promise<Condition | undefined> => {
    const name = backup.metadata?.name ?? '';
    let condition: Condition | undefined;
    await waitUntil(
      `retention after ${name}`,
      async () => {
        const live = await client.get(postgresBackups, name, namespace);
        condition = findCondition(live.status?.conditions, 'Retention');
        return condition !== undefined;
      },
      slow,
    );
    return condition;
  };

  const scheduledObjects = async () =>
    (
      await client.list(postgresBackups, {
        namespace,
        labelSelector: 'postgres.homeostat.dev/scheduled=true',
      })
    ).items
      .map((b) => b.metadata?.name ?? '')
      .sort();

  beforeAll(async () => {
    bed = await startBackupCluster({
      kubeConfig,
      client,
      namespace,
      cluster,
      bucket: 'pg-backups',
      prefix: 'scheduled/orders',
      log,
      pods,
      poll: slow,
      backup: { schedule: '*/5 * * * *', retention: { keepLast: 2 } },
      schedule: { now: () => now, retentionIntervalMs: 250 },
      drills: { now: () => new Date(Date.now() + drillClockOffsetMs), pollIntervalMs: 300 },
    });
  }, 200_000);

  afterAll(async () => {
    await bed?.stop();
    client.close();
  });

  it('takes a backup at each cron time, expires all but the two newest scheduled ones with the WAL only they needed, and never the one by hand', async () => {
    await write(1000);
    const first = await nextRun();
    expect(first.metadata?.labels).toMatchObject({ 'postgres.homeostat.dev/scheduled': 'true' });
    expect(first.spec.target).toBe('PreferStandby');
    expect(first.status?.source).toBe('Standby');
    // Nothing to expire yet: recorded once, nothing deleted.
    expect(await retentionAfter(first)).toMatchObject({ status: 'True', reason: 'NothingToExpire' });

    await write(100);
    await createBackup(client, namespace, 'by-hand', { clusterName: cluster });
    const byHand = await finishedBackup(client, namespace, 'by-hand', slow);
    expect(byHand.status?.phase).toBe('Succeeded');

    await write(100);
    const second = await nextRun();
    expect(await retentionAfter(second)).toMatchObject({ reason: 'NothingToExpire' });

    // An operator restarted between runs takes up where the first left off: one run per cron time.
    await bed.restartOperator();
    await write(100);
    const third = await nextRun();
    const expiredFirst = await retentionAfter(third);
    expect(expiredFirst, JSON.stringify(expiredFirst)).toMatchObject({ status: 'True', reason: 'Expired' });
    expect(expiredFirst?.message).toContain(first.status?.label ?? '?');

    await write(100);
    const fourth = await nextRun();
    expect(await retentionAfter(fourth)).toMatchObject({ status: 'True', reason: 'Expired' });

    const kept = [third, fourth, byHand].map((b) => b.status?.label ?? '').sort();
    // The repository, read where versitygw keeps it: its directories and pgBackRest's backup.info.
    expect(repositoryBackupLabels(bed.repository, cluster)).toEqual(kept);
    expect(backupInfoLabels(bed.repository, cluster)).toEqual(kept);
    expect(await scheduledObjects()).toEqual([third, fourth].map((b) => b.metadata?.name ?? '').sort());
    expect(await client.find(postgresBackups, 'by-hand', namespace)).toBeDefined();

    // The WAL: nothing older than the oldest backup left (by hand), and from it on, every segment.
    const segments = archivedSegments(bed.repository, cluster);
    const oldestStart = byHand.status?.beginWal ?? '';
    expect(segments[0]).toBe(oldestStart);
    expect(segments).not.toContain(first.status?.beginWal);
    for (const b of [byHand, third, fourth]) {
      expect(segments).toContain(b.status?.beginWal);
      expect(segments).toContain(b.status?.endWal);
    }
    const expected = (from: string, to: string) => {
      const list: string[] = [];
      for (let n = parseInt(from.slice(16), 16); n <= parseInt(to.slice(16), 16); n++) {
        list.push(`${from.slice(0, 16)}${n.toString(16).toUpperCase().padStart(8, '0')}`);
      }
      return list;
    };
    // One timeline, fewer than 256 segments here: the range from the oldest start is complete.
    expect(segments.filter((s) => s <= (fourth.status?.endWal ?? ''))).toEqual(
      expected(oldestStart, fourth.status?.endWal ?? ''),
    );

    const status = (await get()).status?.backup;
    expect(status).toMatchObject({
      lastBackupLabel: fourth.status?.label,
      lastBackupTime: fourth.status?.finishedAt,
      lastScheduledBackup: fourth.metadata?.name,
      lastScheduledBackupTime: fourth.metadata?.annotations?.['postgres.homeostat.dev/scheduled-at'],
    });
    expect(Date.parse(status?.nextScheduledBackupTime ?? '')).toBeGreaterThan(now.getTime());
    const reasons = (await client.list(builtin.events, { namespace })).items
      .filter((e) => e.regarding?.kind === 'PostgreSQLCluster')
      .map((e) => e.reason);
    expect(reasons.filter((r) => r === 'ScheduledBackupCreated')).toHaveLength(4);
    expect(reasons.filter((r) => r === 'BackupsExpired')).toHaveLength(2);
    // No expire pod left behind.
    expect(
      (await client.list(builtin.pods, { namespace })).items.filter((p) =>
        p.metadata?.name?.startsWith('postgres-expire-'),
      ),
    ).toEqual([]);
  }, 400_000);

  it('a failing expire is a Warning and the Retention condition, once, and deletes nothing', async () => {
    const before = await scheduledObjects();
    pods.holdExpirePods = true;
    const fifth = await nextRun();
    // The expire pod is made, and the credentials it starts with are refused by the bucket.
    await waitUntil(
      'the expire pod made',
      async () =>
        (await client.list(builtin.pods, { namespace })).items.some((p) =>
          p.metadata?.name?.startsWith('postgres-expire-'),
        ),
      slow,
    );
    const wrongSecret = 'wrong-secret-key-for-the-expire';
    await bed.s3Repository.setSecretKey(wrongSecret);
    pods.holdExpirePods = false;
    try {
      const condition = await retentionAfter(fifth);
      expect(condition).toMatchObject({ status: 'False', reason: 'ExpireFailed' });
      expect(condition?.message).toMatch(
        /^expire: pgbackrest info could not read the repository \(code \d+\): .+; nothing expired/,
      );
      expect(condition?.message).toContain('retention runs again after the next scheduled backup');
      // Nothing deleted: the scheduled backups are those before plus the fifth.
      expect(await scheduledObjects()).toEqual([...before, fifth.metadata?.name ?? ''].sort());
      // Not retried: no second expire pod, one Warning, while the operator keeps reconciling.
      for (let i = 0; i < 3; i++) {
        await client.patch(postgresClusters, cluster, namespace, {
          metadata: { annotations: { 'test.homeostat.dev/tick': String(++tick) } },
        });
        await sleep(1000);
      }
      expect(
        (await client.list(builtin.pods, { namespace })).items.filter((p) =>
          p.metadata?.name?.startsWith('postgres-expire-'),
        ),
      ).toEqual([]);
      const warnings = (await client.list(builtin.events, { namespace })).items.filter(
        (e) => e.regarding?.kind === 'PostgreSQLCluster' && e.reason === 'RetentionFailed',
      );
      expect(warnings).toHaveLength(1);
      expect(warnings[0]?.series?.count ?? 1).toBe(1);
      const everything = JSON.stringify([
        condition,
        (await client.list(builtin.events, { namespace })).items,
        lines,
        pods.bed.allLogs(),
      ]);
      for (const value of [bed.s3.accessKeyId, bed.s3.secretAccessKey, wrongSecret]) {
        expect(everything.includes(value), 'a credential value in status, Events or logs').toBe(false);
      }
    } finally {
      await bed.s3Repository.setSecretKey(bed.s3.secretAccessKey);
    }
  }, 200_000);

  it('keeps a backup a restore drill is restoring until the drill has recorded its verdict, then expires it', async () => {
    // Drills yearly on 1 January: one starts once the drills' clock is moved past the next.
    const drillSchedule = '0 0 1 1 *';
    pods.holdDrillPods = true;
    await client.patch(postgresClusters, cluster, namespace, {
      spec: { backup: { verify: { schedule: drillSchedule } } },
    });
    const nextDrill = scheduleDecision(drillSchedule, new Date(), Date.now()).next;
    drillClockOffsetMs = nextDrill.getTime() - Date.now() + 60_000;
    const livePodNaming = async () =>
      (await client.list(builtin.pods, { namespace, labelSelector: drillSelector })).items
        .filter((p) => !p.metadata?.deletionTimestamp)
        .map((p) => p.metadata?.annotations?.[drilledBackupAnnotation]);
    let drilled = '';
    await waitUntil(
      'a drill pod, held unstarted',
      async () => {
        drilled = (await livePodNaming())[0] ?? '';
        if (drilled === '') await get(); // the status a failed wait prints, as of now
        return drilled !== '';
      },
      // A drill waits for the source's counts first: the primary's log says how its archiving went.
      { ...slow, describe: () => `${slow.describe()}\n${logTail(join(pods.bed.root, 'orders-0.log'), 40)}` },
    );
    // The drill takes the newest backup never drilled: the newest scheduled one.
    expect(drilled).toBe((await scheduledObjects()).at(-1));
    const drilledLabel = (await client.get(postgresBackups, drilled, namespace)).status?.label ?? '?';

    // keepLast 2: after two more scheduled backups the policy lets the drilled one go.
    await write(100);
    await retentionAfter(await nextRun());
    await write(100);
    const keptFor = await retentionAfter(await nextRun());
    expect(keptFor, JSON.stringify(keptFor)).toMatchObject({ status: 'True', reason: 'NothingToExpire' });
    expect(keptFor?.message).toContain(`kept ${drilled} for now: a restore drill is restoring it`);
    expect(await client.find(postgresBackups, drilled, namespace)).toBeDefined();
    expect(repositoryBackupLabels(bed.repository, cluster)).toContain(drilledLabel);

    // The drill runs now, on the backup still there, and records its verdict on it.
    pods.holdDrillPods = false;
    await waitUntil(
      `the drill's verdict on ${drilled}, its pod gone`,
      async () =>
        (await client.get(postgresBackups, drilled, namespace)).status?.verification !== undefined &&
        (await livePodNaming()).length === 0,
      slow,
    );
    const verdict = (await client.get(postgresBackups, drilled, namespace)).status?.verification;
    expect(verdict, JSON.stringify(verdict)).toMatchObject({ result: 'Verified' });
    expect(findCondition((await get()).status?.conditions, 'BackupVerified')).toMatchObject({
      status: 'True',
      reason: 'DrillSucceeded',
    });

    // The drill over, the retention after the next scheduled backup expires it.
    await write(100);
    const expired = await retentionAfter(await nextRun());
    expect(expired, JSON.stringify(expired)).toMatchObject({ status: 'True', reason: 'Expired' });
    expect(expired?.message).toContain(drilledLabel);
    expect(expired?.message).not.toContain('for now');
    expect(await client.find(postgresBackups, drilled, namespace)).toBeUndefined();
    expect(repositoryBackupLabels(bed.repository, cluster)).not.toContain(drilledLabel);
  }, 600_000);
});
