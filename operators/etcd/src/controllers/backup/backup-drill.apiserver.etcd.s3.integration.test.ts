// Restore drills with every side real: a real kube-apiserver holds the EtcdCluster and its
// EtcdBackup, a real etcd member runs the cluster's pod (MemberPodRunner), a real S3-compatible
// server (versitygw) holds the snapshot, and the drill pod's steps run as the real programs (the
// agent, etcdutl, a scratch etcd). Checks a drill that proves a backup (HashKV equal, status and
// Event, pod and claim gone), and drills that fail on a changed and on a removed snapshot (the
// condition names it), the source cluster's pod, claim, Service and keys untouched each time.
import { setTimeout as sleep } from 'node:timers/promises';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { consistently, installCrds, waitUntil } from '@homeostat/testing';
import { sharedKubeConfig } from '@homeostat/testing/shared';
import { startS3Server, type S3TestServer } from '@homeostat/testing/s3';
import { builtin, KubeClient, type Manager } from '@homeostat/reconcile';
import { memoryLogger } from '@homeostat/reconcile/testing';
import { etcdBackupCrd } from '../../api/etcd-backup-crd.ts';
import { etcdBackups, type EtcdBackup } from '../../api/etcd-backup-types.ts';
import { etcdClusterCrd } from '../../api/etcd-cluster-crd.ts';
import { etcdClusters, type EtcdCluster } from '../../api/etcd-cluster-types.ts';
import { compareHashKV } from '../../health/hash-kv.ts';
import {
  conditionOf,
  createEtcdCluster,
  createTestNamespace,
  eventsAbout,
  startTestOperator,
} from '../../test-support/etcd-cluster-fixtures.ts';
import { loopbackAddressing } from '../../test-support/loopback-addressing.ts';
import { MemberPodRunner } from '../../test-support/member-pod-runner.ts';
import { readAll, writeKeys } from '../../test-support/keyspace.ts';
import { s3Destination, testS3Client, type Destination } from '../../test-support/s3-fixtures.ts';
import type { EtcdConnection } from '../../connection.ts';
import { addBackupDrillController, verifyBackupAnnotation } from './backup-drill-controller.ts';
import { drillLabel } from './drill-pod.ts';
import { addEtcdBackupController } from './etcd-backup-controller.ts';

const kubeConfig = sharedKubeConfig();
const namespace = `etcd-drill-${process.pid}`;
const client = new KubeClient(kubeConfig, { fieldManager: 'test-user' });
const poll = { timeoutMs: 120_000, intervalMs: 200 };
const addressing = loopbackAddressing();
const bucket = 'etcd-drills';
const prefix = 'drills/';

describe('restore drills of EtcdBackups, on a real kube-apiserver, real etcd and a real S3 server', () => {
  const { log, lines } = memoryLogger();
  let manager: Manager | undefined;
  let runner: MemberPodRunner;
  let workDir: string;
  let server: S3TestServer;
  let s3: S3Client;
  let destination: Destination;
  let connection: EtcdConnection;
  let backup: EtcdBackup;
  let written: Map<string, string>;
  // The drills' clock: the real one until a test stops it and moves it forward.
  let stoppedClock: Date | undefined;
  let tick = 0;
  /** A change of the cluster wakes the drill controller at once (it would wake at its next time). */
  const nudge = () =>
    client.patch(etcdClusters, 'src', namespace, {
      metadata: { annotations: { 'test.homeostat.dev/tick': String(++tick) } },
    });

  /** What the drill must never change: the member's pod and claim, the client Service's selector. */
  const sourceState = async () => {
    const pod = await client.get(builtin.pods, 'src-0', namespace);
    const claim = await client.get(builtin.persistentVolumeClaims, 'src-0-data', namespace);
    const service = await client.get(builtin.services, 'src', namespace);
    return {
      pod: pod.metadata?.uid,
      restarts: pod.status?.containerStatuses?.[0]?.restartCount,
      claim: claim.metadata?.uid,
      selector: service.spec?.selector,
    };
  };

  /**
   * Asks for a drill (the annotation) and waits until it ran (the stand-in kubelet ran its pod),
   * the operator recorded it (it deletes the pod only after status is written) and its claim is gone.
   */
  const drill = async (request: string): Promise<EtcdCluster> => {
    const runs = runner.drills.runs.length;
    await client.patch(etcdClusters, 'src', namespace, {
      metadata: { annotations: { [verifyBackupAnnotation]: request } },
    });
    await waitUntil(
      `drill ${request} reported`,
      async () =>
        runner.drills.runs.length > runs &&
        (await client.get(etcdClusters, 'src', namespace)).status?.lastBackupDrillRequest === request &&
        (await client.list(builtin.pods, { namespace, labelSelector: drillLabel })).items.length === 0 &&
        (await client.list(builtin.persistentVolumeClaims, { namespace, labelSelector: drillLabel })).items
          .length === 0,
      poll,
    );
    return client.get(etcdClusters, 'src', namespace);
  };

  const startOperator = async () => {
    manager = await startTestOperator(kubeConfig, namespace, addressing, log, (m) => {
      addEtcdBackupController(m, { addressing, etcdCallTimeoutMs: 2000, waitIntervalMs: 300 });
      addBackupDrillController(m, { followIntervalMs: 500, now: () => stoppedClock ?? new Date() });
    });
  };

  const drillObjects = async () => ({
    pods: (await client.list(builtin.pods, { namespace, labelSelector: drillLabel })).items,
    claims: (await client.list(builtin.persistentVolumeClaims, { namespace, labelSelector: drillLabel }))
      .items,
  });

  beforeAll(async () => {
    try {
      await setUp();
    } catch (error) {
      const notable = lines.filter((l) => Number(l['level']) >= 40).slice(-20);
      const cluster = await client.get(etcdClusters, 'src', namespace).catch(() => undefined);
      console.warn(
        JSON.stringify({ operatorLog: notable, status: cluster?.status, runner: runner.describe() }, null, 1),
      );
      throw error;
    }
  }, 300_000);

  const setUp = async () => {
    await installCrds(kubeConfig, [etcdClusterCrd, etcdBackupCrd]);
    await createTestNamespace(client, namespace);
    workDir = await mkdtemp(join(tmpdir(), 'homeostat-etcd-drill-pods-'));
    server = await startS3Server({ buckets: [bucket] });
    s3 = testS3Client(server);
    destination = await s3Destination(client, namespace, server, bucket, prefix);
    runner = new MemberPodRunner(client, namespace, workDir);
    runner.start();
    await startOperator();

    await createEtcdCluster(client, 'src', namespace, { size: 1, backup: { keep: 7, destination } });
    await waitUntil(
      'src Running',
      async () => (await client.get(etcdClusters, 'src', namespace)).status?.phase === 'Running',
      poll,
    );
    const cluster = await client.get(etcdClusters, 'src', namespace);
    const secret = await client.get(builtin.secrets, 'src-client-tls', namespace);
    const file = (key: string) => Buffer.from(secret.data?.[key] ?? '', 'base64');
    connection = {
      endpoints: [(await addressing.urls(cluster, 'src-0')).clientUrl],
      credentials: {
        rootCertificate: file('ca.crt'),
        certChain: file('tls.crt'),
        privateKey: file('tls.key'),
      },
    };
    written = await writeKeys(connection, 'k/', 200);
    await client.create(etcdBackups, {
      metadata: { name: 'nightly', namespace },
      spec: { clusterName: 'src' },
    });
    await waitUntil(
      'nightly Succeeded',
      async () => (await client.get(etcdBackups, 'nightly', namespace)).status?.phase === 'Succeeded',
      poll,
    );
    backup = await client.get(etcdBackups, 'nightly', namespace);
    // Written after the backup: the source moves on, the backup's hash stays what it was.
    await writeKeys(connection, 'later/', 20);
  };

  afterEach(async (context) => {
    if (context.task.result?.state !== 'fail') return;
    const notable = lines.filter((l) => Number(l['level']) >= 40).slice(-20);
    const cluster = await client.get(etcdClusters, 'src', namespace).catch(() => undefined);
    console.warn(
      JSON.stringify({ operatorLog: notable, status: cluster?.status, runs: runner.drills.runs }, null, 1),
    );
  });

  afterAll(async () => {
    await manager?.stop();
    await runner?.stop();
    s3?.destroy();
    await server?.stop();
    await client.delete(builtin.namespaces, namespace).catch(() => undefined);
    client.close();
    await rm(workDir, { recursive: true, force: true });
  });

  it('records the HashKV of the source at the backup revision', async () => {
    const revision = backup.status?.revision ?? '';
    expect(backup.status?.hashKV).toMatch(/^[0-9]+$/);
    // Read again from the source member now: the same revision has the same hash, whatever came after.
    const cluster = await client.get(etcdClusters, 'src', namespace);
    const now = await compareHashKV(
      connection,
      [(await addressing.urls(cluster, 'src-0')).clientUrl],
      revision,
    );
    expect([...now.hashes.values()]).toEqual([backup.status?.hashKV]);
  });

  it('a drill restores the backup into a scratch etcd, finds the same HashKV and records it; the source is untouched', async () => {
    const before = await sourceState();
    const cluster = await drill('1');
    expect(conditionOf(cluster, 'BackupVerified')).toMatchObject({
      status: 'True',
      reason: 'BackupRestored',
    });
    const verified = cluster.status?.lastVerifiedBackup;
    expect(verified).toMatchObject({
      backup: 'nightly',
      restorePoint: backup.status?.finishedAt,
      revision: backup.status?.revision,
      hashKV: backup.status?.hashKV,
    });
    expect(verified?.restoreSeconds).toBeGreaterThan(0);
    expect(verified?.recoveryPointSeconds).toBeGreaterThanOrEqual(0);
    // Recorded on the backup too.
    expect((await client.get(etcdBackups, 'nightly', namespace)).status?.verification).toMatchObject({
      result: 'Verified',
    });
    const [event] = await eventsAbout(client, namespace, 'src', 'BackupVerified');
    expect(event?.note).toContain(`HashKV at revision ${backup.status?.revision ?? ''}`);
    expect(await drillObjects()).toEqual({ pods: [], claims: [] });
    expect(await sourceState()).toEqual(before);
    const run = runner.drills.runs.at(-1);
    expect(run?.outcome).toBe('succeeded');
    // The figure the drill measured, for the report (tests never assert on time).
    console.warn(
      `drill of a ${backup.status?.sizeBytes ?? 0}-byte backup: restoreSeconds ${verified?.restoreSeconds ?? '?'} (status), pod steps ${run?.seconds.toFixed(1) ?? '?'} s`,
    );
  });

  it('a snapshot changed in the bucket fails the drill with SnapshotCorrupt; the last verified backup and the source stay', async () => {
    const before = await sourceState();
    const key = `${prefix}${backup.status?.key ?? ''}`;
    const body = (await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }))).Body;
    const original = Buffer.from((await body?.transformToByteArray()) ?? []);
    expect(original.length).toBe(backup.status?.sizeBytes);
    const changed = Buffer.from(original);
    changed[4096] = (changed[4096] ?? 0) ^ 0xff;
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: changed }));
    const verifiedBefore = (await client.get(etcdClusters, 'src', namespace)).status?.lastVerifiedBackup;

    try {
      const cluster = await drill('2');
      const condition = conditionOf(cluster, 'BackupVerified');
      expect(condition).toMatchObject({ status: 'False', reason: 'SnapshotCorrupt' });
      expect(condition?.message).toContain('nightly');
      expect(cluster.status?.lastVerifiedBackup).toEqual(verifiedBefore);
      expect((await client.get(etcdBackups, 'nightly', namespace)).status?.verification).toMatchObject({
        result: 'Failed',
        reason: 'SnapshotCorrupt',
      });
      const [event] = await eventsAbout(client, namespace, 'src', 'BackupVerificationFailed');
      expect(event?.note).toContain('sha256');
      expect(await drillObjects()).toEqual({ pods: [], claims: [] });
      expect(await sourceState()).toEqual(before);
    } finally {
      // Put back whatever happens, so the tests after this one drill a sound snapshot.
      await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: original }));
    }
  });

  it('a restored copy whose HashKV differs from the recorded one fails the drill with HashMismatch', async () => {
    const recorded = backup.status?.hashKV ?? '';
    // The bytes are sound; the record says another keyspace (as a backup of another history would).
    const other = String((Number(recorded) + 1) % 2 ** 32);
    await client.patchStatus(etcdBackups, 'nightly', namespace, { hashKV: other });
    const cluster = await drill('hash');
    const condition = conditionOf(cluster, 'BackupVerified');
    expect(condition).toMatchObject({ status: 'False', reason: 'HashMismatch' });
    expect(condition?.message).toContain(`is ${recorded}, but the backup recorded ${other}`);
    expect(cluster.status?.lastVerifiedBackup?.hashKV).toBe(recorded);
    await client.patchStatus(etcdBackups, 'nightly', namespace, { hashKV: recorded });
  });

  it('a snapshot removed from the bucket fails the drill with SnapshotMissing; the source keeps serving every key', async () => {
    const before = await sourceState();
    await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: `${prefix}${backup.status?.key ?? ''}` }));

    const cluster = await drill('3');
    const condition = conditionOf(cluster, 'BackupVerified');
    expect(condition).toMatchObject({ status: 'False', reason: 'SnapshotMissing' });
    expect(condition?.message).toContain('NoSuchKey');
    expect(cluster.status?.lastVerifiedBackup?.backup).toBe('nightly');
    expect(await drillObjects()).toEqual({ pods: [], claims: [] });
    expect(await sourceState()).toEqual(before);
    const served = await readAll(connection, connection.endpoints[0] ?? '');
    for (const [key, value] of written) expect(served.get(key)).toBe(value);
    // Other conditions are the cluster controller's and were left as they were.
    expect(conditionOf(cluster, 'Available')).toMatchObject({ status: 'True' });
  });

  it('drills on its cron schedule, once per cron time, by the clock', async () => {
    await client.patch(etcdClusters, 'src', namespace, {
      spec: { backup: { verify: { schedule: '*/5 * * * *' } } },
    });
    const before = (await client.get(etcdClusters, 'src', namespace)).status?.lastBackupDrillTime ?? '';
    // The clock at the last drill (on request, just now): no cron time lies after it, so nothing
    // is due. (The real time could have passed one since, a drill due for a reason of its own.)
    stoppedClock = before ? new Date(before) : new Date();
    await nudge();
    const runs = runner.drills.runs.length;
    await consistently(
      'no second drill for the same cron time',
      async () => runner.drills.runs.length === runs,
      {
        forMs: 1500,
      },
    );
    // Five minutes on: one drill for that cron time.
    stoppedClock = new Date(stoppedClock.getTime() + 5 * 60_000);
    await nudge();
    await waitUntil(
      'scheduled drill recorded',
      async () =>
        runner.drills.runs.length > runs &&
        (await drillObjects()).claims.length === 0 &&
        (await client.get(etcdClusters, 'src', namespace)).status?.lastBackupDrillTime !== before,
      poll,
    );
    const cluster = await client.get(etcdClusters, 'src', namespace);
    expect(cluster.status?.lastBackupDrillTime).toBe(stoppedClock.toISOString());
    // The snapshot was removed by the test before: the scheduled drill says so too.
    expect(conditionOf(cluster, 'BackupVerified')).toMatchObject({ reason: 'SnapshotMissing' });
    await nudge();
    await sleep(1500);
    expect(runner.drills.runs.length).toBe(runs + 1);
  });

  it('ends a drill whose pod never runs after timeoutSeconds: DrillTimedOut, pod and claim deleted', async () => {
    await client.patch(etcdClusters, 'src', namespace, {
      spec: { backup: { verify: { schedule: null, timeoutSeconds: 60 } } },
    });
    // The real clock again: the drill's pod is made now and is not late yet.
    stoppedClock = undefined;
    runner.drills.held = true;
    const before = await sourceState();
    await client.patch(etcdClusters, 'src', namespace, {
      metadata: { annotations: { [verifyBackupAnnotation]: 'held' } },
    });
    await waitUntil('drill pod made', async () => (await drillObjects()).pods.length === 1, poll);
    stoppedClock = new Date(Date.now() + 2 * 60_000);
    await nudge();
    await waitUntil(
      'drill timed out',
      async () => {
        const cluster = await client.get(etcdClusters, 'src', namespace);
        const objects = await drillObjects();
        return (
          conditionOf(cluster, 'BackupVerified')?.reason === 'DrillTimedOut' &&
          objects.pods.length === 0 &&
          objects.claims.length === 0
        );
      },
      poll,
    );
    const cluster = await client.get(etcdClusters, 'src', namespace);
    expect(conditionOf(cluster, 'BackupVerified')?.message).toContain('not done after 60 s');
    expect(await sourceState()).toEqual(before);
    runner.drills.held = false;
    stoppedClock = undefined;
  });

  it('drills a backup in a claim the same way: copied from the claim, restored and compared', async () => {
    await client.create(builtin.persistentVolumeClaims, {
      metadata: { name: 'etcd-backups', namespace },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
    });
    await client.create(etcdBackups, {
      metadata: { name: 'in-claim', namespace },
      spec: { clusterName: 'src', destination: { persistentVolumeClaim: { claimName: 'etcd-backups' } } },
    });
    await waitUntil(
      'in-claim Succeeded',
      async () => (await client.get(etcdBackups, 'in-claim', namespace)).status?.phase === 'Succeeded',
      poll,
    );
    const inClaim = await client.get(etcdBackups, 'in-claim', namespace);
    // The backup pod read the exact revision from its file, and hashed the member at it.
    expect(inClaim.status?.hashKV).toMatch(/^[0-9]+$/);
    const before = await sourceState();
    const cluster = await drill('claim');
    expect(conditionOf(cluster, 'BackupVerified')).toMatchObject({
      status: 'True',
      reason: 'BackupRestored',
    });
    expect(cluster.status?.lastVerifiedBackup).toMatchObject({
      backup: 'in-claim',
      revision: inClaim.status?.revision,
      hashKV: inClaim.status?.hashKV,
    });
    expect((await client.get(etcdBackups, 'in-claim', namespace)).status?.verification?.result).toBe(
      'Verified',
    );
    expect(await drillObjects()).toEqual({ pods: [], claims: [] });
    expect(await sourceState()).toEqual(before);
  });

  it('an operator stopped mid-drill: the next one finds the drill pod and records its answer once', async () => {
    runner.drills.held = true;
    await client.patch(etcdClusters, 'src', namespace, {
      metadata: { annotations: { [verifyBackupAnnotation]: 'restart' } },
    });
    await waitUntil('drill pod made', async () => (await drillObjects()).pods.length === 1, poll);
    const [pod] = (await drillObjects()).pods;
    await manager?.stop();
    manager = undefined;
    // The pod runs to its end while no operator looks.
    const runs = runner.drills.runs.length;
    runner.drills.held = false;
    await waitUntil('drill pod ran', () => Promise.resolve(runner.drills.runs.length > runs), poll);
    await startOperator();
    await waitUntil(
      'drill recorded by the new operator',
      async () => (await drillObjects()).claims.length === 0 && (await drillObjects()).pods.length === 0,
      poll,
    );
    const cluster = await client.get(etcdClusters, 'src', namespace);
    expect(cluster.status?.lastBackupDrillRequest).toBe('restart');
    expect(conditionOf(cluster, 'BackupVerified')).toMatchObject({
      status: 'True',
      reason: 'BackupRestored',
    });
    expect(cluster.status?.lastVerifiedBackup?.backup).toBe('in-claim');
    // The pod made before the stop is the one that answered; no second drill for the same request.
    expect(runner.drills.runs.at(-1)?.uid).toBe(pod?.metadata?.uid);
    await sleep(1500);
    expect(runner.drills.runs.length).toBe(runs + 1);
  });
});
