// Disaster recovery with every side real: a real kube-apiserver, real etcd members for the pods
// the operator makes (MemberPodRunner), a real S3-compatible server (versitygw) holding the backup.
// A three-member cluster with spec.recovery.onQuorumLoss RestoreNewestBackup loses two members'
// pods for a moment (they come back with their data: nothing restored), then loses two members'
// pods and claims for good: after afterSeconds the operator restores it from the newest backup as
// a new etcd cluster with the keys of that backup, Events at each step, the backup untouched.
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { installCrds, waitUntil } from '@homeostat/testing';
import { sharedKubeConfig } from '@homeostat/testing/shared';
import { startS3Server, type S3TestServer } from '@homeostat/testing/s3';
import { builtin, KubeClient, type Manager } from '@homeostat/reconcile';
import { memoryLogger } from '@homeostat/reconcile/testing';
import { etcdBackupCrd } from '../api/etcd-backup-crd.ts';
import { etcdBackups } from '../api/etcd-backup-types.ts';
import { etcdClusterCrd } from '../api/etcd-cluster-crd.ts';
import { etcdClusters } from '../api/etcd-cluster-types.ts';
import { compareHashKV } from '../health/hash-kv.ts';
import { clusterConnection, waitForVoters } from '../test-support/cluster-clients.ts';
import {
  loseMembers,
  takeBackupOf,
  waitForClaimsGone,
  waitForRecovered,
} from '../test-support/recovery-fixtures.ts';
import {
  conditionOf,
  createEtcdCluster,
  createTestNamespace,
  eventsAbout,
  startTestOperator,
} from '../test-support/etcd-cluster-fixtures.ts';
import { expectKeyspaceOnEveryMember, readAll, writeKeys } from '../test-support/keyspace.ts';
import { loopbackAddressing } from '../test-support/loopback-addressing.ts';
import { MemberPodRunner } from '../test-support/member-pod-runner.ts';
import { s3Destination, type Destination } from '../test-support/s3-fixtures.ts';
import { addEtcdBackupController } from './backup/etcd-backup-controller.ts';

const kubeConfig = sharedKubeConfig();
const namespace = `etcd-recovery-${process.pid}`;
const client = new KubeClient(kubeConfig, { fieldManager: 'test-user' });
const poll = { timeoutMs: 120_000, intervalMs: 200 };
const addressing = loopbackAddressing();
const bucket = 'etcd-backups';
const name = 'dr';

describe('recovery from a lost quorum by the newest backup, real etcd members and S3, on a real kube-apiserver', () => {
  const { log, lines } = memoryLogger();
  let manager: Manager | undefined;
  let runner: MemberPodRunner;
  let workDir: string;
  let server: S3TestServer;
  let destination: Destination;

  const cluster = () => client.get(etcdClusters, name, namespace);
  const memberIds = async () => (await cluster()).status?.members?.map((m) => m.id);
  const reasons = async () => {
    const list = await client.list(builtin.events, { namespace });
    return list.items
      .filter((e) => e.regarding?.name === name)
      .sort((a, b) => String(a.eventTime ?? '').localeCompare(String(b.eventTime ?? '')))
      .map((e) => e.reason ?? '');
  };
  const lose = (members: readonly string[], withData: boolean) =>
    loseMembers(client, namespace, members, withData);
  const startOperator = async () => {
    manager = await startTestOperator(kubeConfig, namespace, addressing, log, (m) => {
      addEtcdBackupController(m, { addressing, etcdCallTimeoutMs: 2000, waitIntervalMs: 300 });
    });
  };
  const takeBackup = (backup: string) => takeBackupOf(client, namespace, name, backup, poll);

  beforeAll(async () => {
    await installCrds(kubeConfig, [etcdClusterCrd, etcdBackupCrd]);
    await createTestNamespace(client, namespace);
    workDir = await mkdtemp(join(tmpdir(), 'homeostat-etcd-recovery-pods-'));
    server = await startS3Server({ buckets: [bucket] });
    destination = await s3Destination(client, namespace, server, bucket, 'dr/');
    runner = new MemberPodRunner(client, namespace, workDir);
    runner.start();
    await startOperator();
    await createEtcdCluster(client, name, namespace, {
      size: 3,
      backup: { keep: 7, destination },
      recovery: { onQuorumLoss: 'RestoreNewestBackup', afterSeconds: 10 },
    });
    await waitForVoters(client, namespace, name, 3, poll);
  });

  afterEach(async (context) => {
    if (context.task.result?.state !== 'fail') return;
    const notable = lines.filter((l) => Number(l['level']) >= 40).slice(-20);
    console.warn(JSON.stringify({ operatorLog: notable, status: (await cluster()).status }, null, 1));
  });

  afterAll(async () => {
    await manager?.stop();
    await runner?.stop();
    await server?.stop();
    await client.delete(builtin.namespaces, namespace).catch(() => undefined);
    client.close();
    await rm(workDir, { recursive: true, force: true });
  });

  it('leaves a majority that comes back with its data alone: same members, every key, nothing restored', async () => {
    const connection = await clusterConnection(client, addressing, await cluster(), 3);
    const written = await writeKeys(connection, 'early/', 50);
    const ids = await memberIds();
    const podUid = async (member: string) =>
      (await client.find(builtin.pods, member, namespace))?.metadata?.uid;
    const uids = [await podUid(`${name}-1`), await podUid(`${name}-2`)];
    await lose([`${name}-1`, `${name}-2`], false);
    await waitUntil(
      'both member pods made again',
      async () => {
        const now = [await podUid(`${name}-1`), await podUid(`${name}-2`)];
        return now.every((uid, i) => uid !== undefined && uid !== uids[i]);
      },
      poll,
    );
    // The operator makes their pods again from their claims; quorum is back well within 10 s.
    await waitForVoters(client, namespace, name, 3, poll);
    await waitUntil(
      'every member answers again',
      async () => {
        for (const url of connection.endpoints) await readAll(connection, url);
        return true;
      },
      poll,
    );
    await waitUntil(
      'the operator sees quorum back',
      async () => {
        const status = (await cluster()).status;
        return (
          conditionOf(await cluster(), 'QuorumLost')?.status === 'False' &&
          status?.recovery?.phase !== 'Waiting'
        );
      },
      poll,
    );
    expect(await memberIds()).toEqual(ids);
    await expectKeyspaceOnEveryMember(connection, connection.endpoints, written);
    const seen = await reasons();
    expect(seen).not.toContain('RecoveryStarted');
    // If the operator saw the loss it said so, and said it was over. Events are written in the
    // background: the status can say Cancelled a moment before its Event is there.
    if (seen.includes('RecoveryScheduled')) {
      await waitUntil(
        'RecoveryCancelled recorded',
        async () => (await reasons()).includes('RecoveryCancelled'),
        poll,
      );
    }
  });

  it(
    'restores a majority lost with its data from the newest backup, as a new cluster with that backup’s keys',
    { timeout: 300_000 },
    async () => {
      const before = await cluster();
      const connection = await clusterConnection(client, addressing, before, 3);
      await writeKeys(connection, 'backed-up/', 100);
      await takeBackup('dr-older');
      await writeKeys(connection, 'backed-up-late/', 10);
      const backup = await takeBackup('dr-newest');
      const expected = await readAll(connection, connection.endpoints[0] ?? '');
      // Written after the newest backup: lost with the majority.
      await writeKeys(connection, 'after-backup/', 5);

      // Both at once, as one failure: with the operator stopped, so that it does not replace the
      // first member lost while the other two still have quorum (a minority loss, healed without a backup).
      await manager?.stop();
      const majority = [`${name}-1`, `${name}-2`];
      await lose(majority, true);
      await waitForClaimsGone(client, namespace, majority, poll);
      await startOperator();
      const recovered = await waitForRecovered(client, namespace, name, 3, poll);
      expect(recovered.status?.recovery).toMatchObject({
        phase: 'Recovered',
        generation: 1,
        backupName: 'dr-newest',
        backupRevision: backup.status?.revision,
        lostClusterId: before.status?.clusterId,
        membersDeleted: true,
      });
      const { quorumLostAt, startedAt, finishedAt } = recovered.status?.recovery ?? {};
      // It waited afterSeconds before touching anything.
      expect(Date.parse(startedAt ?? '') - Date.parse(quorumLostAt ?? '')).toBeGreaterThanOrEqual(10_000);
      expect(Date.parse(finishedAt ?? '')).toBeGreaterThanOrEqual(Date.parse(startedAt ?? ''));
      expect(recovered.status?.clusterId).not.toBe(before.status?.clusterId);
      const oldIds = new Set(before.status?.members?.map((m) => m.id));
      expect(recovered.status?.members?.filter((m) => oldIds.has(m.id))).toEqual([]);
      expect(conditionOf(recovered, 'Recovering')).toMatchObject({ status: 'False', reason: 'Recovered' });
      expect(conditionOf(recovered, 'QuorumLost')).toMatchObject({ status: 'False' });

      // The backup's keys, no more (the writes after it are gone), the same on every member.
      const restored = await clusterConnection(client, addressing, recovered, 3);
      await expectKeyspaceOnEveryMember(restored, restored.endpoints, expected);
      const hashes = await compareHashKV(restored, restored.endpoints);
      expect(hashes.consistent, JSON.stringify([...hashes.hashes])).toBe(true);

      // Each step said so, in order; the first member was restored from the backup once.
      const seen = await reasons();
      expect(seen).toContain('QuorumLost');
      const order = [
        'RecoveryScheduled',
        'RecoveryStarted',
        'LostMembersDeleted',
        'RestoreStarted',
        'RecoveryCompleted',
      ];
      const at = order.map((reason) => seen.lastIndexOf(reason));
      expect(
        at.every((i) => i >= 0),
        JSON.stringify(seen),
      ).toBe(true);
      expect([...at].sort((a, b) => a - b)).toEqual(at);
      // None of them repeated (each decided from the status as written, not from a lagging cache).
      for (const reason of order) {
        const emitted = await eventsAbout(client, namespace, name, reason);
        expect(emitted.filter((e) => e.series !== undefined)).toEqual([]);
      }
      const [started] = await eventsAbout(client, namespace, name, 'RecoveryStarted');
      expect(started?.note).toContain('restoring from EtcdBackup dr-newest');

      // The backup was only read: still Succeeded, its object byte for byte what it recorded.
      const after = await client.get(etcdBackups, 'dr-newest', namespace);
      expect(after.status).toEqual(backup.status);
      const bytes = await readFile(server.objectPath(bucket, `dr/${backup.status?.key ?? ''}`));
      expect(
        createHash('sha256')
          .update(bytes.subarray(0, bytes.length - 32))
          .digest('hex'),
      ).toBe(backup.status?.sha256);
    },
  );
});
