// An operator stopped in the middle of a backup writes nothing more to the bucket: the backup's S3
// calls take the reconcile's AbortSignal, which aborts when a shutdown outlasts its deadline or
// leadership is lost (then another replica may be taking the same backup). Every side real: a
// real kube-apiserver, real etcd members (MemberPodRunner), a real S3 server (versitygw) reached
// through a loopback proxy that holds the operator's requests back while it is being stopped.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { S3Client } from '@aws-sdk/client-s3';
import { consistently, startTcpProxy, type TcpProxy, waitUntil } from '@homeostat/testing';
import { startS3Server, type S3TestServer } from '@homeostat/testing/s3';
import { etcdBackups } from '../../api/etcd-backup-types.ts';
import { waitForVoters } from '../../test-support/cluster-clients.ts';
import { createEtcdCluster, eventsAbout } from '../../test-support/etcd-cluster-fixtures.ts';
import { useOperatorTestBed } from '../../test-support/operator-test-bed.ts';
import { objectKeys, s3Destination, testS3Client } from '../../test-support/s3-fixtures.ts';

const bed = useOperatorTestBed({ label: 'backup-stopped', backups: true });
const { client, namespace, poll } = bed;
const bucket = 'backups';
const prefix = 'halted/';

describe('a backup when its operator is stopped mid-way, real etcd and S3, on a real kube-apiserver', () => {
  let server: S3TestServer;
  let proxy: TcpProxy;
  let s3: S3Client;

  beforeAll(async () => {
    server = await startS3Server({ buckets: [bucket] });
    proxy = await startTcpProxy(Number(new URL(server.endpoint).port));
    s3 = testS3Client(server);
    await createEtcdCluster(client, 'halted', namespace, { size: 1 });
    await waitForVoters(client, namespace, 'halted', 1, poll);
  });

  afterAll(async () => {
    s3?.destroy();
    await proxy?.close();
    await server?.stop();
  });

  it('sends nothing once stopped; the next operator takes the backup again', async () => {
    const destination = await s3Destination(client, namespace, server, bucket, prefix);
    if (!destination.s3) throw new Error('an s3 destination was asked for');
    const throughProxy = { s3: { ...destination.s3, endpoint: `http://127.0.0.1:${proxy.port}` } };

    // The operator's first S3 call waits in the proxy: the backup is Running, its upload not begun.
    proxy.hold();
    await client.create(etcdBackups, {
      metadata: { name: 'halted-now', namespace },
      spec: { clusterName: 'halted', destination: throughProxy },
    });
    await waitUntil(
      'halted-now Running with a request to S3 on its way',
      async () =>
        proxy.connections > 0 &&
        (await client.get(etcdBackups, 'halted-now', namespace)).status?.phase === 'Running',
      poll,
    );

    // Stopped past its 5 s deadline, the operator aborts the reconcile; then the requests it had
    // sent reach the server. The old operator's upload went on from there to a committed object.
    await bed.stopOperator();
    proxy.resume();
    await consistently(
      'no object committed by the stopped operator, the backup still Running',
      async () =>
        (await objectKeys(s3, bucket, prefix)).length === 0 &&
        (await client.get(etcdBackups, 'halted-now', namespace)).status?.phase === 'Running',
      { forMs: 3000, intervalMs: 300 },
    );

    await bed.startOperator();
    await waitUntil(
      'halted-now Succeeded',
      async () => (await client.get(etcdBackups, 'halted-now', namespace)).status?.phase === 'Succeeded',
      poll,
    );
    expect(await eventsAbout(client, namespace, 'halted-now', 'BackupRestarted')).toHaveLength(1);
    const keys = await objectKeys(s3, bucket, prefix);
    expect(keys).toHaveLength(2); // the snapshot and its record
  });
});
