// Restore drills that compare row counts with the source at one WAL position (ADR 0221), end to
// end: a real kube-apiserver + etcd, the operator with its clock moved to the schedule's next run,
// a primary and a streaming standby as real PostgreSQL processes, pgBackRest and a real S3 server
// (versitygw over TLS). Under a steady write load, the operator pauses the standby's replay, counts
// there at L, resumes it, and the drill pod, restored to just before L, counts the same; the drill
// passes with the counts equal. A drill whose reported counts differ from the source's (written as
// its kubelet would report them) fails with CountsDiffer, naming the database and both counts. A
// segment missing before L stops the copy short of L, and the drill names that segment. A standby
// left paused (a count that never ended) is resumed by the cluster controller after a grace.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '@homeostat/testing';
import { builtin, KubeClient, type Manager } from '@homeostat/reconcile';
import { memoryLogger } from '@homeostat/reconcile/testing';
import { sharedKubeConfig } from '@homeostat/testing/shared';
import { PodProcesses } from '../../test-support/pod-processes.ts';
import {
  clusterReader,
  createCluster,
  podOperator,
  prepareNamespace,
} from '../../test-support/pod-cluster.ts';
import { startS3Repository, type S3Repository } from '../../test-support/s3-repository.ts';
import { drillHarness } from '../../test-support/drill-harness.ts';
import { ackedTable, loopbackTarget, startWriteLoad } from '../../test-support/write-load.ts';
import { parseSourceCounts, sourceCountsAnnotation } from './compare-counts.ts';
import { drilledBackupAnnotation } from './drill-pod.ts';

const kubeConfig = sharedKubeConfig();
const namespace = `pg-drillcount-${process.pid}`;
// A stanza name no other test file uses (pgBackRest's remote side locks in the machine's /tmp).
const cluster = 'ledger';
const bucket = 'pg-drill-counts';
const schedule = '0 0 1 1 *';
const client = new KubeClient(kubeConfig, { fieldManager: 'test-user' });
const { log, lines } = memoryLogger();
const { get, events, slow } = clusterReader(client, namespace, cluster, lines);

describe('restore drills compare row counts with the source at one WAL position: real kube-apiserver, PostgreSQL, pgBackRest, S3', () => {
  const pods = new PodProcesses(client, namespace, cluster);
  const drill = drillHarness({ client, namespace, cluster, schedule, pods, get, slow });
  const { nextDrillDue, sql, verified, takeBackup, verification, drillPods } = drill;
  const standby = `${cluster}-1`;
  const pauseState = async () =>
    (await sql<{ state: string }>('SELECT pg_get_wal_replay_pause_state() AS state', standby))[0]?.state;
  let manager: Manager;
  let repository: S3Repository;

  beforeAll(async () => {
    await prepareNamespace(kubeConfig, client, namespace);
    repository = await startS3Repository(client, namespace, bucket);
    manager = podOperator(
      kubeConfig,
      namespace,
      log,
      pods,
      // Above a count here (under a second), far below the default: a forgotten pause is seen soon.
      { pausedReplayGraceMs: 6000 },
      { now: drill.now, pollIntervalMs: 300 },
    );
    await manager.start();
    await createCluster(client, namespace, cluster, {
      instances: 2,
      backup: { destination: { s3: repository.destination(cluster) }, verify: { schedule } },
    });
    await pods.start();
    await waitUntil(
      'a primary and a ready standby',
      async () => {
        const status = (await get()).status;
        return (
          status?.currentPrimary === `${cluster}-0` &&
          !!status.instanceStatuses?.some((i) => i.name === standby && i.role === 'replica' && i.ready)
        );
      },
      slow,
    );
    await sql('CREATE TABLE marks(id bigserial PRIMARY KEY, label text NOT NULL)');
    await sql("INSERT INTO marks(label) SELECT 'row ' || g FROM generate_series(1, 500) g");
    await sql(ackedTable);
    await takeBackup('base');
    await drill.switchAndArchive();
  }, 300_000);

  afterAll(async () => {
    await manager?.stop();
    await pods.stop();
    await repository?.stop();
    client.close();
  });

  it('under a steady write load, counts the source on the paused standby at L, restores to L, finds the same counts and passes; the standby replays again', async () => {
    const load = startWriteLoad(loopbackTarget(pods.readWritePort, pods.bed.superuser, pods.ca), {
      pauseMs: 5,
    });
    try {
      await waitUntil('the load writing', async () => load.acked.length > 20, slow);
      await nextDrillDue();
      await waitUntil('BackupVerified True', async () => (await verified())?.status === 'True', slow);
      const last = (await get()).status?.lastVerifiedBackup;
      expect(last?.comparedWithSource).toMatchObject({ result: 'Equal', standby });
      const lsn = last?.comparedWithSource?.lsn ?? '';
      expect(lsn).toMatch(/^[0-9A-F]+\/[0-9A-F]+$/);
      // The copy was counted at L, mid-load: some acked rows, not all of them.
      const postgres = last?.databases.find((d) => d.name === 'postgres');
      const ackedAtL = (postgres?.rows ?? 0) - 500 - 1; // marks: 500, and one by switchAndArchive
      expect(ackedAtL).toBeGreaterThan(0);
      expect(ackedAtL).toBeLessThan(load.acked.length);
      expect((await verified())?.message).toContain(`tables and rows equal to the source's at ${lsn}`);
      expect(await verification('base')).toMatchObject({ result: 'Verified' });
      expect(await pauseState()).toBe('not paused');
      const before = load.acked.length;
      await waitUntil('the load still writing', async () => load.acked.length > before + 20, slow);
      expect(load.errors).toBe(0);
    } finally {
      await load.stop();
    }
  }, 300_000);

  it('fails with CountsDiffer, naming the database and both counts, when the copy reports other counts', async () => {
    pods.holdDrillPods = true;
    try {
      await nextDrillDue();
      await waitUntil('a drill pod', async () => (await drillPods()).length === 1, slow);
      const [pod] = await drillPods();
      const source = parseSourceCounts(pod?.metadata?.annotations?.[sourceCountsAnnotation]);
      expect(source?.compared).toBe(true);
      if (!pod || !source?.compared) return;
      const env = pod.spec?.containers[0]?.env ?? [];
      expect(env.find((e) => e.name === 'PG_DRILL_COUNT_LSN')?.value).toBe(source.lsn);
      expect(env.find((e) => e.name === 'PG_DRILL_COUNT_SQL')?.value).toContain('count(*)');
      const real = source.databases.find((d) => d.name === 'postgres');
      // What a copy of other data would report at L: one row fewer in postgres. The source's
      // side is the operator's real count on the standby.
      const reported = {
        backup: 'x',
        restoredTo: '',
        replayedThrough: '000000010000000000000009',
        archiveEnd: '000000010000000000000009',
        restoreSeconds: 1,
        countedAt: source.lsn,
        databases: source.databases.map((d) => (d.name === 'postgres' ? { ...d, rows: d.rows - 1 } : d)),
      };
      await client.patchStatus(builtin.pods, pod.metadata?.name ?? '', namespace, {
        phase: 'Succeeded',
        containerStatuses: [
          {
            name: 'drill',
            image: '',
            imageID: '',
            ready: false,
            restartCount: 0,
            state: {
              terminated: {
                exitCode: 0,
                reason: 'Completed',
                message: JSON.stringify(reported),
                finishedAt: new Date(),
              },
            },
          },
        ],
      });
      await waitUntil('BackupVerified False', async () => (await verified())?.status === 'False', slow);
      const condition = await verified();
      expect(condition?.reason).toBe('CountsDiffer');
      expect(condition?.message).toBe(
        `counts at ${source.lsn} (source counted on ${standby}) differ: database postgres: source ${real?.tables} tables, ${real?.rows} rows, restored copy ${real?.tables} tables, ${(real?.rows ?? 0) - 1} rows`,
      );
      const drilled = pod.metadata?.annotations?.[drilledBackupAnnotation] ?? '';
      expect(await verification(drilled)).toMatchObject({ result: 'Failed', reason: 'CountsDiffer' });
      expect((await events('BackupVerificationFailed')).at(-1)?.note).toBe(condition?.message);
      expect(await pauseState()).toBe('not paused');
    } finally {
      pods.holdDrillPods = false;
    }
  }, 300_000);

  it('resumes a standby whose replay a count left paused (an operator stopped mid-count), with a Warning Event', async () => {
    await sql('SELECT pg_wal_replay_pause()', standby);
    const paused = Date.now();
    await waitUntil('the replay resumed', async () => (await pauseState()) === 'not paused', slow);
    // Not before the grace: a count under way is never cut short.
    expect(Date.now() - paused).toBeGreaterThanOrEqual(5500);
    const resumed = (await events('ReplayResumed')).at(-1);
    expect(resumed?.type).toBe('Warning');
    expect(resumed?.note).toBe(
      `the replay of ${standby} was paused for over 6 s with no restore drill count under way: resumed`,
    );
  }, 300_000);

  it('names the missing segment when a WAL segment before L is gone from the bucket (the copy never reaches L)', async () => {
    await drill.switchAndArchive();
    const gone = await drill.switchAndArchive();
    await drill.switchAndArchive();
    repository.removeArchivedSegment(cluster, cluster, gone);
    await nextDrillDue();
    await waitUntil(
      'BackupVerified False, DrillFailed',
      async () => (await verified())?.reason === 'DrillFailed',
      slow,
    );
    expect((await verified())?.message).toContain(`segment ${gone} is missing or unreadable`);
    expect(await pauseState()).toBe('not paused');
  }, 300_000);
});
