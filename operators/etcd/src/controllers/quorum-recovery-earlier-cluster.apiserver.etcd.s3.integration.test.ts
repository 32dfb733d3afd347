// Disaster recovery never restores a backup of an earlier EtcdCluster of the same name, every side
// real: a real kube-apiserver, real etcd members for the pods the operator makes (MemberPodRunner),
// a real S3-compatible server (versitygw). A cluster is backed up, deleted (its objects removed as
// the garbage collector would) and created again under the same name; the new one loses its
// quorum: the first one's backup, still there and sound, is skipped, and the recovery fails saying
// why, with the surviving member untouched.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '@homeostat/testing';
import { startS3Server, type S3TestServer } from '@homeostat/testing/s3';
import { builtin } from '@homeostat/reconcile';
import { etcdBackups } from '../api/etcd-backup-types.ts';
import { etcdClusters } from '../api/etcd-cluster-types.ts';
import { clusterConnection, waitForVoters } from '../test-support/cluster-clients.ts';
import { conditionOf, createEtcdCluster, eventsAbout } from '../test-support/etcd-cluster-fixtures.ts';
import { writeKeys } from '../test-support/keyspace.ts';
import { useOperatorTestBed } from '../test-support/operator-test-bed.ts';
import { loseMembers, takeBackupOf, waitForClaimsGone } from '../test-support/recovery-fixtures.ts';
import { s3Destination, type Destination } from '../test-support/s3-fixtures.ts';

const bed = useOperatorTestBed({ label: 'recovery-earlier', pollTimeoutMs: 120_000, backups: true });
const { client, namespace, addressing, poll } = bed;
const bucket = 'etcd-backups';
const name = 'again';

describe('recovery skips a backup of an earlier cluster of the same name, real etcd and S3, on a real kube-apiserver', () => {
  let server: S3TestServer;
  let destination: Destination;

  const cluster = () => bed.cluster(name);
  beforeAll(async () => {
    server = await startS3Server({ buckets: [bucket] });
    destination = await s3Destination(client, namespace, server, bucket, 'again/');
  });

  afterAll(async () => {
    await server?.stop();
  });

  it(
    'does not restore the first cluster’s backup into the second: Failed, BackupOfEarlierCluster, nothing deleted',
    { timeout: 300_000 },
    async () => {
      // The first cluster of the name, with a sound backup.
      const earlier = await createEtcdCluster(client, name, namespace, {
        size: 1,
        backup: { keep: 7, destination },
      });
      const running = await waitForVoters(client, namespace, name, 1, poll);
      await writeKeys(await clusterConnection(client, addressing, running, 1), 'earlier/', 20);
      const backup = await takeBackupOf(client, namespace, name, 'of-the-earlier', poll);
      await client.delete(etcdClusters, name, namespace);
      await waitUntil(
        'the first cluster gone',
        async () => (await client.find(etcdClusters, name, namespace)) === undefined,
        poll,
      );
      // What the garbage collector does once the owner is gone (the test control plane runs none).
      await bed.collectGarbage(earlier.metadata?.uid ?? '');
      await waitForClaimsGone(client, namespace, [`${name}-0`], poll);

      // The second cluster of the name, which loses a majority with its data.
      const later = await createEtcdCluster(client, name, namespace, {
        size: 3,
        backup: { keep: 7, destination },
        recovery: { onQuorumLoss: 'RestoreNewestBackup', afterSeconds: 10 },
      });
      const before = await waitForVoters(client, namespace, name, 3, poll);
      await bed.stopOperator();
      const majority = [`${name}-1`, `${name}-2`];
      await loseMembers(client, namespace, majority, true);
      await waitForClaimsGone(client, namespace, majority, poll);
      const survivor = await client.get(builtin.pods, `${name}-0`, namespace);
      await bed.startOperator();

      await waitUntil(
        `${name}: the recovery chose a backup or found none`,
        async () =>
          ['Failed', 'Restoring', 'Recovered'].includes((await cluster()).status?.recovery?.phase ?? ''),
        poll,
      );
      const after = await cluster();
      expect(after.status?.recovery?.phase).toBe('Failed');
      expect(after.status?.recovery?.message).toContain('of-the-earlier (BackupOfEarlierCluster)');
      expect(conditionOf(after, 'Degraded')).toMatchObject({ status: 'True', reason: 'NoUsableBackup' });
      const [skipped] = await eventsAbout(client, namespace, name, 'RecoveryBackupSkipped');
      expect(skipped?.type).toBe('Warning');
      expect(skipped?.note).toContain(
        `EtcdBackup of-the-earlier cannot be restored: taken of an earlier EtcdCluster named ${name} (uid ${earlier.metadata?.uid ?? '?'}), not of this one (uid ${later.metadata?.uid ?? '?'})`,
      );
      expect(await eventsAbout(client, namespace, name, 'RecoveryStarted')).toEqual([]);
      // Nothing of the second cluster was deleted: its surviving member and its data are as they were.
      expect((await client.get(builtin.pods, `${name}-0`, namespace)).metadata?.uid).toBe(
        survivor.metadata?.uid,
      );
      expect(after.status?.clusterId).toBe(before.status?.clusterId);

      // What the backup recorded, and it was only read.
      expect(backup.status).toMatchObject({
        clusterUid: earlier.metadata?.uid,
        etcdClusterId: running.status?.clusterId,
      });
      expect((await client.get(etcdBackups, 'of-the-earlier', namespace)).status).toEqual(backup.status);
    },
  );
});
