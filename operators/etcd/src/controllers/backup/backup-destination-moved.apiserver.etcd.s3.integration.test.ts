// Backups after their cluster's destination moved, every side real: a real kube-apiserver, real
// etcd members for the pods the operator makes (MemberPodRunner), and a real S3-compatible server
// (versitygw) with two buckets. A backup taken to the first bucket is restored into a new cluster
// after the cluster's destination moved to the second, and a scheduled one written to the first is
// deleted there by retention, not looked for in the second.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { S3Client } from '@aws-sdk/client-s3';
import { waitUntil } from '@homeostat/testing';
import { startS3Server, type S3TestServer } from '@homeostat/testing/s3';
import { etcdBackups } from '../../api/etcd-backup-types.ts';
import { etcdClusters } from '../../api/etcd-cluster-types.ts';
import { clusterConnection, waitForVoters } from '../../test-support/cluster-clients.ts';
import { conditionOf, createEtcdCluster, eventsAbout } from '../../test-support/etcd-cluster-fixtures.ts';
import { expectKeyspaceOnEveryMember, readAll, writeKeys } from '../../test-support/keyspace.ts';
import { useOperatorTestBed } from '../../test-support/operator-test-bed.ts';
import { takeBackupOf } from '../../test-support/recovery-fixtures.ts';
import { objectKeys, s3Destination, testS3Client, type Destination } from '../../test-support/s3-fixtures.ts';
import { ScheduleClock } from '../../test-support/schedule-clock.ts';
import { addBackupScheduleController } from './backup-schedule-controller.ts';

const clock = new ScheduleClock();
const bed = useOperatorTestBed({
  label: 'backup-moved',
  backups: true,
  addControllers: (m) => addBackupScheduleController(m, { now: clock.now }),
});
const { client, namespace, addressing, poll } = bed;
const name = 'mover';

describe('backups after the destination moved, real etcd and S3, on a real kube-apiserver', () => {
  let server: S3TestServer;
  let s3: S3Client;
  let first: Destination;
  let second: Destination;
  const scheduledNames = async () =>
    (await client.list(etcdBackups, { namespace, labelSelector: 'etcd.homeostat.dev/scheduled=true' })).items
      .map((b) => b.metadata?.name ?? '')
      .sort();
  const nextScheduledRun = (run: number) => clock.nextRun(client, namespace, name, run, poll);

  beforeAll(async () => {
    server = await startS3Server({ buckets: ['backups-one', 'backups-two'] });
    s3 = testS3Client(server);
    first = await s3Destination(client, namespace, server, 'backups-one', 'one/');
    second = await s3Destination(client, namespace, server, 'backups-two', 'two/');
    await createEtcdCluster(client, name, namespace, {
      size: 1,
      backup: { schedule: '*/5 * * * *', keep: 1, destination: first },
    });
    await waitForVoters(client, namespace, name, 1, poll);
  });

  afterAll(async () => {
    s3?.destroy();
    await server?.stop();
  });

  it('restores a backup from where it was written after the cluster’s destination moved', async () => {
    const source = await client.get(etcdClusters, name, namespace);
    const connection = await clusterConnection(client, addressing, source, 1);
    await writeKeys(connection, 'before-move/', 50);
    const expected = await readAll(connection, connection.endpoints[0] ?? '');
    const backup = await takeBackupOf(client, namespace, name, 'before-move', poll);
    expect(backup.status?.location).toMatch(/^s3:\/\/backups-one\/one\//);

    await client.patch(etcdClusters, name, namespace, { spec: { backup: { destination: second } } });
    await createEtcdCluster(client, 'copy', namespace, {
      size: 1,
      bootstrap: { fromBackup: { backupName: 'before-move' } },
    });
    // Restoring ends False either way: Restored, or the reason the backup was refused. (Degraded
    // alone is no refusal: it is True while the restored member's pod is made again.)
    await waitUntil(
      'copy restored or refused',
      async () =>
        conditionOf(await client.get(etcdClusters, 'copy', namespace), 'Restoring')?.status === 'False',
      poll,
    );
    expect(conditionOf(await client.get(etcdClusters, 'copy', namespace), 'Restoring')).toMatchObject({
      status: 'False',
      reason: 'Restored',
    });
    const [started] = await eventsAbout(client, namespace, 'copy', 'RestoreStarted');
    expect(started?.note).toContain(backup.status?.location ?? '?');
    const restored = await waitForVoters(client, namespace, 'copy', 1, poll);
    expect(conditionOf(restored, 'Degraded')).toMatchObject({ status: 'False' });
    const copyConnection = await clusterConnection(client, addressing, restored, 1);
    await expectKeyspaceOnEveryMember(copyConnection, copyConnection.endpoints, expected);
    // Where it went, recorded whole: the cluster's destination at the time.
    expect(backup.status?.destination).toEqual(first);
  });

  it('deletes a scheduled backup beyond retention from where it was written, not from today’s destination', async () => {
    // The destination goes back to the first bucket for one run, then moves to the second again.
    await client.patch(etcdClusters, name, namespace, { spec: { backup: { destination: first } } });
    const old = await nextScheduledRun(1);
    const oldKey = `one/${old.status?.key ?? '?'}`;
    expect(await objectKeys(s3, 'backups-one', oldKey)).toEqual([oldKey, `${oldKey}.json`]);

    await client.patch(etcdClusters, name, namespace, { spec: { backup: { destination: second } } });
    const kept = await nextScheduledRun(2);
    expect(kept.status?.location).toMatch(/^s3:\/\/backups-two\/two\//);
    await waitUntil(
      'the older scheduled backup pruned',
      async () => (await scheduledNames()).join() === kept.metadata?.name,
      poll,
    );
    // Its object and record are gone from the bucket it was written to; the kept one is in the other.
    expect(await objectKeys(s3, 'backups-one', oldKey)).toEqual([]);
    const keptKey = `two/${kept.status?.key ?? '?'}`;
    expect(await objectKeys(s3, 'backups-two', keptKey)).toEqual([keptKey, `${keptKey}.json`]);
    const pruned = await eventsAbout(client, namespace, name, 'BackupPruned');
    expect(pruned).toHaveLength(1);
    expect(pruned[0]?.note).toContain(`s3://backups-one/${oldKey}`);
  });
});
