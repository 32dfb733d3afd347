// Disaster recovery from a backup kept in a PersistentVolumeClaim, every side real: a real
// kube-apiserver, real etcd members for the pods the operator makes, and the operator image's agent
// for its short-lived pods (MemberPodRunner). A three-member cluster backs up into a claim of its
// own, then once more into a member's claim; a majority is lost with its data; after afterSeconds
// the operator skips the backup on the member claim (the recovery deletes that claim), has the
// other checked by a pod and restores the cluster from it, as a new etcd cluster with its keys.
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { installCrds } from '@homeostat/testing';
import { sharedKubeConfig } from '@homeostat/testing/shared';
import { builtin, KubeClient, type Manager } from '@homeostat/reconcile';
import { memoryLogger } from '@homeostat/reconcile/testing';
import { etcdBackupCrd } from '../api/etcd-backup-crd.ts';
import { etcdBackups, type EtcdBackupSpecFields } from '../api/etcd-backup-types.ts';
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
import { claimVerifyPodName } from './backup/claim-verify.ts';
import { addEtcdBackupController } from './backup/etcd-backup-controller.ts';

const kubeConfig = sharedKubeConfig();
const namespace = `etcd-recovery-claim-${process.pid}`;
const client = new KubeClient(kubeConfig, { fieldManager: 'test-user' });
const poll = { timeoutMs: 120_000, intervalMs: 200 };
const addressing = loopbackAddressing();
const name = 'drc';

describe('recovery from a lost quorum by the newest backup in a claim, real etcd members, on a real kube-apiserver', () => {
  const { log, lines } = memoryLogger();
  let manager: Manager | undefined;
  let runner: MemberPodRunner;
  let workDir: string;

  const cluster = () => client.get(etcdClusters, name, namespace);
  const startOperator = async () => {
    manager = await startTestOperator(kubeConfig, namespace, addressing, log, (m) => {
      addEtcdBackupController(m, { addressing, etcdCallTimeoutMs: 2000, waitIntervalMs: 300 });
    });
  };
  const takeBackup = (backup: string, destination?: EtcdBackupSpecFields['destination']) =>
    takeBackupOf(client, namespace, name, backup, poll, destination);

  beforeAll(async () => {
    await installCrds(kubeConfig, [etcdClusterCrd, etcdBackupCrd]);
    await createTestNamespace(client, namespace);
    workDir = await mkdtemp(join(tmpdir(), 'homeostat-etcd-recovery-claim-pods-'));
    runner = new MemberPodRunner(client, namespace, workDir);
    runner.start();
    await startOperator();
    await client.create(builtin.persistentVolumeClaims, {
      metadata: { name: 'dr-backups', namespace },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
    });
    await createEtcdCluster(client, name, namespace, {
      size: 3,
      backup: {
        keep: 7,
        destination: { persistentVolumeClaim: { claimName: 'dr-backups', directory: 'etcd' } },
      },
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
    await client.delete(builtin.namespaces, namespace).catch(() => undefined);
    client.close();
    await rm(workDir, { recursive: true, force: true });
  });

  it(
    'restores a majority lost with its data from the newest backup in a claim, never from one in a member claim',
    { timeout: 300_000 },
    async () => {
      const before = await cluster();
      const connection = await clusterConnection(client, addressing, before, 3);
      await writeKeys(connection, 'backed-up/', 100);
      const backup = await takeBackup('drc-in-claim');
      const expected = await readAll(connection, connection.endpoints[0] ?? '');
      await writeKeys(connection, 'late/', 5);
      // Newer, but in member 0's claim, which the recovery deletes with the other member claims.
      await takeBackup('drc-on-member', {
        persistentVolumeClaim: { claimName: `${name}-0-data`, directory: 'backups' },
      });

      // A majority lost with its data, as one failure (the operator stopped meanwhile, so that it
      // does not replace the first member lost while the others still have quorum).
      await manager?.stop();
      const majority = [`${name}-1`, `${name}-2`];
      await loseMembers(client, namespace, majority, true);
      await waitForClaimsGone(client, namespace, majority, poll);
      await startOperator();
      const recovered = await waitForRecovered(client, namespace, name, 3, poll);
      expect(recovered.status?.recovery).toMatchObject({
        phase: 'Recovered',
        generation: 1,
        backupName: 'drc-in-claim',
        backupRevision: backup.status?.revision,
        lostClusterId: before.status?.clusterId,
        membersDeleted: true,
      });
      expect(recovered.status?.clusterId).not.toBe(before.status?.clusterId);
      expect(conditionOf(recovered, 'Recovering')).toMatchObject({ status: 'False', reason: 'Recovered' });

      // Each step said so once (decided from the status as written, not from a lagging cache).
      for (const reason of [
        'RecoveryScheduled',
        'RecoveryStarted',
        'LostMembersDeleted',
        'RestoreStarted',
        'RecoveryCompleted',
      ]) {
        const emitted = await eventsAbout(client, namespace, name, reason);
        expect(emitted.map((e) => ({ reason: e.reason, series: e.series }))).toEqual([
          { reason, series: undefined },
        ]);
      }
      // The backup on the member claim was skipped once, saying why.
      const skipped = await eventsAbout(client, namespace, name, 'RecoveryBackupSkipped');
      expect(skipped).toHaveLength(1);
      expect(skipped[0]?.series).toBeUndefined();
      expect(skipped[0]?.note).toMatch(
        new RegExp(
          `^EtcdBackup drc-on-member cannot be restored: .*claim ${name}-0-data holds a member's data`,
        ),
      );
      const [started] = await eventsAbout(client, namespace, name, 'RestoreStarted');
      expect(started?.note).toContain(`pvc://dr-backups/etcd/${backup.status?.key ?? ''}`);
      expect(started?.note).toContain(`sha256 ${backup.status?.sha256 ?? ''} verified`);

      // Member 0 was restored by copying the file from the claim, mounted read-only.
      // (The pod that restored it: it is made again without the restore once every member is a
      // healthy voter.)
      const pod = runner.startedPods(`${name}-0`).find((p) => p.spec?.initContainers);
      expect(pod?.spec?.initContainers?.map((c) => c.name)).toEqual([
        'copy-backup',
        'restore',
        'finish-restore',
      ]);
      expect(pod?.spec?.volumes?.find((v) => v.name === 'backup-source')?.persistentVolumeClaim).toEqual({
        claimName: 'dr-backups',
        readOnly: true,
      });
      expect(await client.find(builtin.pods, claimVerifyPodName(recovered), namespace)).toBeUndefined();

      // The backup's keys, no more, the same on every member.
      const restored = await clusterConnection(client, addressing, recovered, 3);
      await expectKeyspaceOnEveryMember(restored, restored.endpoints, expected);
      const hashes = await compareHashKV(restored, restored.endpoints);
      expect(hashes.consistent, JSON.stringify([...hashes.hashes])).toBe(true);

      // The backup and its claim were only read.
      expect((await client.get(etcdBackups, 'drc-in-claim', namespace)).status).toEqual(backup.status);
      const bytes = await readFile(join(runner.volumeDir('dr-backups'), 'etcd', backup.status?.key ?? ''));
      expect(
        createHash('sha256')
          .update(bytes.subarray(0, bytes.length - 32))
          .digest('hex'),
      ).toBe(backup.status?.sha256);
    },
  );
});
