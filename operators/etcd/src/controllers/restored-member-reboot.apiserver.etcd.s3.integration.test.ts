// The first member of a cluster restored from a backup, long after the restore: its backup pruned,
// the S3 Secret rotated away, then its node rebooted (the kubelet runs the pod's init containers
// again) and its pod deleted. Every side real: a real kube-apiserver, real etcd members run by the
// stand-in kubelet (which runs init containers as the real agent and etcdutl, resolving Secret
// references as the kubelet does), and a real S3-compatible server (versitygw).
import { DeleteObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '@homeostat/testing';
import { startS3Server, type S3TestServer } from '@homeostat/testing/s3';
import { builtin } from '@homeostat/reconcile';
import type { V1Pod } from '@kubernetes/client-node';
import { etcdBackups } from '../api/etcd-backup-types.ts';
import { clusterConnection, waitForVoters } from '../test-support/cluster-clients.ts';
import { conditionOf, createEtcdCluster, eventsAbout } from '../test-support/etcd-cluster-fixtures.ts';
import { expectKeyspaceOnEveryMember, writeKeys } from '../test-support/keyspace.ts';
import { useOperatorTestBed } from '../test-support/operator-test-bed.ts';
import { s3Destination, testS3Client, type Destination } from '../test-support/s3-fixtures.ts';

const bed = useOperatorTestBed({ label: 'reboot', backups: true });
const { client, namespace, addressing, poll } = bed;
const bucket = 'etcd-backups';

const isReady = (pod: V1Pod | undefined) =>
  pod?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
const secretRefs = (pod: V1Pod) =>
  [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])].flatMap((c) =>
    (c.env ?? []).flatMap((e) => e.valueFrom?.secretKeyRef?.name ?? []),
  );

describe('a restored member after its backup and S3 Secret are gone, on real etcd and a real kube-apiserver', () => {
  let server: S3TestServer;
  let s3: S3Client;
  let destination: Destination;

  beforeAll(async () => {
    server = await startS3Server({ buckets: [bucket] });
    s3 = testS3Client(server);
    destination = await s3Destination(client, namespace, server, bucket, 'reboot/');
  });

  afterAll(async () => {
    s3?.destroy();
    await server?.stop();
  });

  it('its pod is made again without the restore once the cluster is whole; it then survives a reboot and a deletion', async () => {
    await createEtcdCluster(client, 'src', namespace, { size: 1, backup: { destination, keep: 7 } });
    const source = await waitForVoters(client, namespace, 'src', 1, poll);
    const keys = await writeKeys(await clusterConnection(client, addressing, source, 1), 'k/', 100);
    await client.create(etcdBackups, { metadata: { name: 'b', namespace }, spec: { clusterName: 'src' } });
    await waitUntil(
      'EtcdBackup b Succeeded',
      async () => (await client.get(etcdBackups, 'b', namespace)).status?.phase === 'Succeeded',
      poll,
    );
    const backup = await client.get(etcdBackups, 'b', namespace);

    await createEtcdCluster(client, 'copy', namespace, {
      size: 3,
      bootstrap: { fromBackup: { backupName: 'b' } },
    });
    // Member 0 is restored by its init containers, which read the S3 Secret.
    await waitUntil(
      'copy-0 made',
      async () => Boolean(await client.find(builtin.pods, 'copy-0', namespace)),
      poll,
    );
    const restoring = await client.get(builtin.pods, 'copy-0', namespace);
    expect(restoring.spec?.initContainers?.map((c) => c.name)).toEqual([
      'fetch-backup',
      'restore',
      'finish-restore',
    ]);
    expect(secretRefs(restoring)).toContain('s3-etcd-backups');
    // Once every member is a healthy voter, member 0's pod is made again without them; the restore
    // is finished (Restoring False, phase Running) only then, so a client that waits for Running
    // never meets member 0 going down.
    const running = await waitForVoters(client, namespace, 'copy', 3, poll);
    expect(conditionOf(running, 'Restoring')).toMatchObject({ status: 'False', reason: 'Restored' });
    const recreated = await client.get(builtin.pods, 'copy-0', namespace);
    expect(recreated.metadata?.uid).not.toBe(restoring.metadata?.uid);
    expect(isReady(recreated)).toBe(true);
    expect(recreated.spec?.initContainers ?? []).toEqual([]);
    expect(secretRefs(recreated)).toEqual([]);
    expect((await eventsAbout(client, namespace, 'copy', 'MemberRecreated')).map((e) => e.note)).toEqual([
      expect.stringMatching(
        /^recreating the pod of copy-0 with its claim: its pod still carried the init containers/,
      ),
    ]);
    const cluster = await waitForVoters(client, namespace, 'copy', 3, poll);

    // The backup pruned and its Secret rotated away; then the node reboots.
    await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: backup.status?.key ?? '' }));
    await client.delete(builtin.secrets, 's3-etcd-backups', namespace);
    // Its container started again (one more restart, as the kubelet counts it; the start time is
    // kept to the second, and a reboot within the second of the last start looks the same) and
    // Ready: a not-Ready moment in between may be shorter than any poll.
    const restarts = async () =>
      (await client.get(builtin.pods, 'copy-0', namespace)).status?.containerStatuses?.[0]?.restartCount ?? 0;
    const before = await restarts();
    bed.runner.reboot('copy-0');
    await waitUntil(
      'copy-0 started again after the reboot, and Ready',
      async () => {
        const pod = await client.get(builtin.pods, 'copy-0', namespace);
        return (await restarts()) > before && isReady(pod);
      },
      poll,
    );

    // And its pod deleted: made again, still without the restore, Ready on its data.
    await client.delete(builtin.pods, 'copy-0', namespace);
    await waitUntil(
      'a new copy-0, Ready',
      async () => {
        const pod = await client.find(builtin.pods, 'copy-0', namespace);
        return pod !== undefined && pod.metadata?.uid !== recreated.metadata?.uid && isReady(pod);
      },
      poll,
    );
    const again = await client.get(builtin.pods, 'copy-0', namespace);
    expect(again.spec?.initContainers ?? []).toEqual([]);
    expect(secretRefs(again)).toEqual([]);
    await waitForVoters(client, namespace, 'copy', 3, poll);
    const connection = await clusterConnection(client, addressing, cluster, 3);
    await expectKeyspaceOnEveryMember(connection, connection.endpoints, keys);
  });
});
