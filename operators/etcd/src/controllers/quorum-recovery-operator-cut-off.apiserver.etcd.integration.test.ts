// A disaster recovery starts only on evidence from the members' side, never on the operator's own
// blindness. Real kube-apiserver, real etcd members for the pods the operator makes
// (MemberPodRunner reports their readiness from etcd's /readyz, as the kubelet does), a restorable
// backup in a claim. Only the operator is cut off from the members: its client Secret is replaced
// by a certificate of another CA (the members keep theirs). Past afterSeconds every member pod and
// claim is the same object, nothing is restored, and every key is there; the status says the
// operator cannot reach the members while their pods are Ready.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { V1ObjectMeta } from '@kubernetes/client-node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { installCrds, waitUntil } from '@homeostat/testing';
import { sharedKubeConfig } from '@homeostat/testing/shared';
import { builtin, KubeClient, type Manager } from '@homeostat/reconcile';
import { memoryLogger } from '@homeostat/reconcile/testing';
import { etcdBackupCrd } from '../api/etcd-backup-crd.ts';
import { etcdClusterCrd } from '../api/etcd-cluster-crd.ts';
import { etcdClusters } from '../api/etcd-cluster-types.ts';
import { clusterConnection, waitForVoters } from '../test-support/cluster-clients.ts';
import { takeBackupOf } from '../test-support/recovery-fixtures.ts';
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
import { createCertificateAuthority, issueCertificate } from '../tls/certificates.ts';
import { addEtcdBackupController } from './backup/etcd-backup-controller.ts';
import { memberLabel } from './cluster-names.ts';
import { caValidDays, certificateValidDays } from './cluster-tls.ts';

const kubeConfig = sharedKubeConfig();
const namespace = `etcd-recovery-cut-off-${process.pid}`;
const client = new KubeClient(kubeConfig, { fieldManager: 'test-user' });
const poll = { timeoutMs: 120_000, intervalMs: 200 };
const addressing = loopbackAddressing();
const name = 'dco';
const afterSeconds = 10; // the least the API server accepts

const encode = (text: string) => Buffer.from(text, 'utf8').toString('base64');

describe('no recovery when only the operator is cut off from the members, on a real kube-apiserver', () => {
  const { log, lines } = memoryLogger();
  let manager: Manager | undefined;
  let runner: MemberPodRunner;
  let workDir: string;

  const cluster = () => client.get(etcdClusters, name, namespace);
  /** uid of every member pod and claim, by name. */
  const memberObjects = async () => {
    const options = { namespace, labelSelector: memberLabel };
    const [pods, claims] = await Promise.all([
      client.list(builtin.pods, options),
      client.list(builtin.persistentVolumeClaims, options),
    ]);
    const entries = (kind: string, items: readonly { metadata?: V1ObjectMeta }[]) =>
      items.map((o) => [
        `${kind}/${o.metadata?.name ?? ''}`,
        `${o.metadata?.uid ?? ''}${o.metadata?.deletionTimestamp ? ' (deleting)' : ''}`,
      ]);
    return Object.fromEntries([...entries('pod', pods.items), ...entries('claim', claims.items)]);
  };

  beforeAll(async () => {
    await installCrds(kubeConfig, [etcdClusterCrd, etcdBackupCrd]);
    await createTestNamespace(client, namespace);
    workDir = await mkdtemp(join(tmpdir(), 'homeostat-etcd-recovery-cut-off-pods-'));
    runner = new MemberPodRunner(client, namespace, workDir);
    runner.start();
    manager = await startTestOperator(kubeConfig, namespace, addressing, log, (m) => {
      addEtcdBackupController(m, { addressing, etcdCallTimeoutMs: 2000, waitIntervalMs: 300 });
    });
    await client.create(builtin.persistentVolumeClaims, {
      metadata: { name: 'dco-backups', namespace },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
    });
    await createEtcdCluster(client, name, namespace, {
      size: 3,
      backup: {
        keep: 7,
        destination: { persistentVolumeClaim: { claimName: 'dco-backups', directory: 'etcd' } },
      },
      recovery: { onQuorumLoss: 'RestoreNewestBackup', afterSeconds },
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
    'keeps every member, claim and key when its client certificate no longer matches, past afterSeconds',
    { timeout: 300_000 },
    async () => {
      const before = await cluster();
      const connection = await clusterConnection(client, addressing, before, 3);
      await writeKeys(connection, 'backed-up/', 50);
      // A backup the recovery could restore: without the fix it would, and lose what follows.
      await takeBackupOf(client, namespace, name, 'dco-before', poll);
      await writeKeys(connection, 'after-backup/', 20);
      const expected = await readAll(connection, connection.endpoints[0] ?? '');
      const objects = await memberObjects();
      expect(Object.keys(objects)).toHaveLength(6);

      // Only the operator is cut off: its client Secret now holds a certificate (and CA) the members
      // do not trust, and that does not trust them. The members' own Secrets are unchanged.
      const secretName = `${name}-client-tls`;
      const original = await client.get(builtin.secrets, secretName, namespace);
      // Valid for years, as the operator's own: one about to expire the operator would issue again.
      const otherCa = await createCertificateAuthority('another etcd CA', caValidDays);
      const stranger = await issueCertificate(otherCa, {
        commonName: `${name}-client`,
        usages: ['client'],
        validDays: certificateValidDays,
      });
      await client.patch(builtin.secrets, secretName, namespace, {
        data: {
          'ca.crt': encode(otherCa.certificate),
          'tls.crt': encode(stranger.certificate),
          'tls.key': encode(stranger.privateKey),
        },
      });

      // The operator has noticed it reads no quorum.
      await waitUntil(
        `${name}: QuorumLost no longer False`,
        async () => conditionOf(await cluster(), 'QuorumLost')?.status !== 'False',
        poll,
      );
      const cutOffAt = Date.now();
      // Past afterSeconds, with room for the recovery's steps (it checks a claim backup with a pod).
      await waitUntil(
        `${afterSeconds * 2} s past the cut-off, or a recovery started`,
        async () =>
          Date.now() - cutOffAt > afterSeconds * 2000 ||
          (await eventsAbout(client, namespace, name, 'RecoveryStarted')).length > 0,
        { timeoutMs: 120_000, intervalMs: 500 },
      );

      const now = await cluster();
      expect(now.status?.recovery?.phase).toBeUndefined();
      expect(now.status?.clusterId).toBe(before.status?.clusterId);
      expect(now.status?.phase).toBe('Degraded');
      expect(conditionOf(now, 'QuorumLost')).toMatchObject({
        status: 'Unknown',
        reason: 'MembersUnreachable',
      });
      expect(conditionOf(now, 'QuorumLost')?.message).toMatch(/3 of 3 member pods Ready/);
      expect(conditionOf(now, 'Degraded')).toMatchObject({ status: 'True', reason: 'MembersUnreachable' });
      for (const reason of ['RecoveryScheduled', 'RecoveryStarted', 'LostMembersDeleted']) {
        expect(await eventsAbout(client, namespace, name, reason), reason).toEqual([]);
      }
      expect(await memberObjects()).toEqual(objects);
      await expectKeyspaceOnEveryMember(connection, connection.endpoints, expected);

      // Its certificate back, the operator sees the cluster as it was.
      await client.patch(builtin.secrets, secretName, namespace, { data: original.data ?? {} });
      const back = await waitForVoters(client, namespace, name, 3, poll);
      expect(back.status?.clusterId).toBe(before.status?.clusterId);
      expect(conditionOf(back, 'QuorumLost')).toMatchObject({ status: 'False' });
    },
  );
});
