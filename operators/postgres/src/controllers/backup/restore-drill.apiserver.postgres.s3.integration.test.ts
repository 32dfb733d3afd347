// Restore drills end to end (spec.backup.verify): a real kube-apiserver + etcd, the operator with
// its clock moved to the schedule's next run, a real PostgreSQL per instance pod, pgBackRest and a
// real S3 server (versitygw over TLS). A drill after a base backup restores it and the WAL
// archived after it in a pod of its own, checks it and records it (the backup's verification,
// lastVerifiedBackup, BackupVerified True, an Event), then deletes its pod and claim. With two
// more backups, the next drills prove the newest, then the older one the newest-only rule would
// never reach. A WAL segment removed from the bucket makes the next drill fail and name that
// segment, and the cluster itself is untouched. A drill whose pod never starts fails with
// DrillTimedOut once spec.backup.verify.timeoutSeconds has passed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consistently, waitUntil } from '@homeostat/testing';
import { builtin, KubeClient, type Manager } from '@homeostat/reconcile';
import { memoryLogger } from '@homeostat/reconcile/testing';
import { postgresBackups } from '../../api/postgres-backup-types.ts';
import { postgresClusters } from '../../api/postgres-cluster-types.ts';
import { PodProcesses } from '../../test-support/pod-processes.ts';
import { sharedKubeConfig } from '@homeostat/testing/shared';
import {
  clusterReader,
  createCluster,
  podOperator,
  prepareNamespace,
} from '../../test-support/pod-cluster.ts';
import { startS3Repository, type S3Repository } from '../../test-support/s3-repository.ts';
import { drilledBackupAnnotation, drillSelector } from './drill-pod.ts';
import { drillHarness } from '../../test-support/drill-harness.ts';

const kubeConfig = sharedKubeConfig();
const namespace = `pg-drill-${process.pid}`;
// A stanza name no other test file uses (pgBackRest's remote side locks in the machine's /tmp).
const cluster = 'vault';
const bucket = 'pg-drills';
const prefix = 'vault';
// Yearly, on 1 January: nothing runs until the test moves the operator's clock past it.
const schedule = '0 0 1 1 *';
const client = new KubeClient(kubeConfig, { fieldManager: 'test-user' });
const { log, lines } = memoryLogger();
const { get, slow } = clusterReader(client, namespace, cluster, lines);

describe('restore drills: real kube-apiserver, real PostgreSQL and pgBackRest, real S3', () => {
  const pods = new PodProcesses(client, namespace, cluster);
  let manager: Manager;
  let repository: S3Repository;
  const { now, nextDrillDue, advance, sql, switchAndArchive, verified, takeBackup, verification, drillPods } =
    drillHarness({ client, namespace, cluster, schedule, pods, get, slow });
  /** Runs the next drill to its end; returns the label it restored. */
  const drillOnce = async () => {
    const before = (await get()).status?.lastVerifiedBackup?.verifiedAt;
    await nextDrillDue();
    await waitUntil(
      'the next drill recorded',
      async () => (await get()).status?.lastVerifiedBackup?.verifiedAt !== before,
      slow,
    );
    return (await get()).status?.lastVerifiedBackup?.backup;
  };

  beforeAll(async () => {
    await prepareNamespace(kubeConfig, client, namespace);
    repository = await startS3Repository(client, namespace, bucket);
    manager = podOperator(
      kubeConfig,
      namespace,
      log,
      pods,
      {},
      {
        now,
        pollIntervalMs: 300,
      },
    );
    await manager.start();
    await createCluster(client, namespace, cluster, {
      instances: 1,
      backup: { destination: { s3: repository.destination(prefix) }, verify: { schedule } },
    });
    await pods.start();
    await waitUntil('the primary', async () => (await get()).status?.currentPrimary !== undefined, slow);
    await sql('CREATE TABLE marks(id bigserial PRIMARY KEY, label text NOT NULL)');
    await sql("INSERT INTO marks(label) SELECT 'row ' || g FROM generate_series(1, 500) g");
    await takeBackup('base');
    await switchAndArchive();
  }, 300_000);

  afterAll(async () => {
    await manager?.stop();
    await pods.stop();
    await repository?.stop();
    client.close();
  });

  it('restores the newest backup and the archive in a pod of its own, checks it, records it, removes its pod and claim', async () => {
    const label = (await client.get(postgresBackups, 'base', namespace)).status?.label ?? '';
    const primaryUid = (await client.get(builtin.pods, `${cluster}-0`, namespace)).metadata?.uid;
    await nextDrillDue();
    await waitUntil('BackupVerified True', async () => (await verified())?.status === 'True', slow);
    const status = (await get()).status;
    expect(status?.lastVerifiedBackup).toMatchObject({ backup: label });
    expect(status?.lastVerifiedBackup?.restoreSeconds).toBeGreaterThanOrEqual(0);
    expect(status?.lastVerifiedBackup?.recoveryPointSeconds).toBeGreaterThanOrEqual(0);
    expect(status?.lastVerifiedBackup?.replayedThrough).toMatch(/^[0-9A-F]{24}$/);
    // One instance: no standby to pause, so nothing to compare with, and the drill says so.
    expect(status?.lastVerifiedBackup?.comparedWithSource).toEqual({
      result: 'NotCompared',
      reason: 'no streaming standby to count on (a primary is never paused, so it is not counted)',
    });
    const databases = status?.lastVerifiedBackup?.databases ?? [];
    // The rows written after the backup came back through the archive.
    expect(databases.find((d) => d.name === 'postgres')?.rows).toBeGreaterThanOrEqual(501);
    expect(databases.map((d) => d.name)).toContain('app');
    expect((await verified())?.message).toContain(`backup ${label}`);
    expect(await verification('base')).toMatchObject({ result: 'Verified' });
    // The claim's protection finalizer is removed by kube-controller-manager, which this control
    // plane does not run: a claim being deleted counts as gone.
    const drillObjects = async () => [
      ...(await client.list(builtin.pods, { namespace, labelSelector: drillSelector })).items,
      ...(await client.list(builtin.persistentVolumeClaims, { namespace, labelSelector: drillSelector }))
        .items,
    ];
    await waitUntil(
      'the drill pod and claim deleted',
      async () => (await drillObjects()).every((o) => o.metadata?.deletionTimestamp),
      slow,
    );
    const events = (await client.list(builtin.events, { namespace })).items.filter(
      (e) => e.regarding?.name === cluster && e.reason === 'BackupVerified',
    );
    expect(events.length).toBe(1);
    // The cluster was not touched: the same primary pod, still taking writes.
    expect((await client.get(builtin.pods, `${cluster}-0`, namespace)).metadata?.uid).toBe(primaryUid);
    await sql("INSERT INTO marks(label) VALUES ('after the drill')");
  }, 300_000);

  it('proves every backup: the newest never drilled first, then an older one, not the newest again', async () => {
    const second = await takeBackup('second');
    await switchAndArchive();
    const third = await takeBackup('third');
    await switchAndArchive();
    expect(await drillOnce()).toBe(third);
    expect(await drillOnce()).toBe(second);
    for (const name of ['base', 'second', 'third'])
      expect(await verification(name), name).toMatchObject({ result: 'Verified' });
  }, 300_000);

  it('fails, naming the segment, when a WAL segment is missing from the bucket, and the cluster is untouched', async () => {
    const [first, second] = [await switchAndArchive(), await switchAndArchive()];
    await switchAndArchive();
    repository.removeArchivedSegment(prefix, cluster, second);
    expect(first < second).toBe(true);
    await nextDrillDue();
    await waitUntil('BackupVerified False', async () => (await verified())?.status === 'False', slow);
    const condition = await verified();
    expect(condition?.reason).toBe('DrillFailed');
    expect(condition?.message).toContain(`segment ${second} is missing or unreadable`);
    // The last drill that passed is still the one on record.
    expect((await get()).status?.lastVerifiedBackup?.backup).toBeDefined();
    expect(condition?.message).not.toContain(repository.s3.secretAccessKey);
    // Every backup was drilled: this drill took the newest, and its failure is recorded on it.
    expect(await verification('third')).toMatchObject({ result: 'Failed' });
    expect((await verification('third'))?.message).toContain(`segment ${second} is missing`);
    await sql("INSERT INTO marks(label) VALUES ('after the failed drill')");
  }, 300_000);

  it('ends a drill that never finishes: DrillTimedOut on the cluster and its backup, pod and claim deleted', async () => {
    await client.patch(
      postgresClusters,
      cluster,
      namespace,
      { spec: { backup: { verify: { timeoutSeconds: 60 } } } },
      { patchType: 'merge' },
    );
    // The pod stays unstarted, as one that cannot be scheduled or whose image cannot be pulled.
    pods.holdDrillPods = true;
    try {
      await nextDrillDue();
      await waitUntil('a drill pod', async () => (await drillPods()).length === 1, slow);
      const [pod] = await drillPods();
      const drilled = pod?.metadata?.annotations?.[drilledBackupAnnotation] ?? '';
      // Within its 60 s, the drill is waited for.
      await consistently('the drill is waited for', async () => (await drillPods()).length === 1, {
        forMs: 1500,
      });
      advance(61_000);
      await waitUntil(
        'BackupVerified False',
        async () => (await verified())?.reason === 'DrillTimedOut',
        slow,
      );
      expect((await verified())?.message).toContain(
        'not done after 60 s (spec.backup.verify.timeoutSeconds)',
      );
      expect(await verification(drilled)).toMatchObject({ result: 'Failed', reason: 'DrillTimedOut' });
      await waitUntil('the drill pod deleted', async () => (await drillPods()).length === 0, slow);
    } finally {
      pods.holdDrillPods = false;
    }
  }, 300_000);

  it('refuses at the API server a schedule that is not five cron fields, in the words of every other schedule', async () => {
    await expect(
      createCluster(client, namespace, 'bad-schedule', {
        instances: 1,
        backup: { destination: { s3: repository.destination('bad') }, verify: { schedule: 'every sunday' } },
      }),
    ).rejects.toThrow(/verify\.schedule must be a cron expression of five fields/);
  });
});
