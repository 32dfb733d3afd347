// A real S3-compatible server (versitygw) for the backup tests, the Secret the operator reads its
// credentials from, and a client to look at what the operator left in the bucket.
import {
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  CreateMultipartUploadCommand,
  UploadPartCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { builtin, type KubeClient } from '@homeostat/reconcile';
import type { S3TestServer } from '@homeostat/testing/s3';
import type { EtcdClusterSpecFields } from '../api/etcd-cluster-types.ts';

export type Destination = NonNullable<EtcdClusterSpecFields['backup']>['destination'];

/** Creates the credentials Secret and returns an s3 destination in `bucket` under `prefix`. */
export async function s3Destination(
  client: KubeClient,
  namespace: string,
  server: S3TestServer,
  bucket: string,
  prefix: string,
): Promise<Destination> {
  const secretName = `s3-${bucket}`;
  await client.create(builtin.secrets, {
    metadata: { name: secretName, namespace },
    stringData: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey },
  });
  return {
    s3: {
      bucket,
      prefix,
      endpoint: server.endpoint,
      region: server.region,
      forcePathStyle: true,
      credentialsSecretName: secretName,
    },
  };
}

/** A plain S3 client for the test itself. */
export function testS3Client(server: S3TestServer): S3Client {
  return new S3Client({
    endpoint: server.endpoint,
    region: server.region,
    forcePathStyle: true,
    credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey },
  });
}

/** Every committed object key under `prefix`. */
export async function objectKeys(s3: S3Client, bucket: string, prefix: string): Promise<string[]> {
  const listed = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }));
  return (listed.Contents ?? []).map((o) => o.Key ?? '').sort();
}

/** Unfinished multipart uploads under `prefix` (what an interrupted backup leaves). */
export async function unfinishedUploads(s3: S3Client, bucket: string, prefix: string): Promise<string[]> {
  const listed = await s3.send(new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: prefix }));
  return (listed.Uploads ?? []).map((u) => u.Key ?? '');
}

/** Starts an upload to `key` and sends one part, as an operator killed mid-stream would leave it. */
export async function leaveUnfinishedUpload(s3: S3Client, bucket: string, key: string): Promise<void> {
  const started = await s3.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: key }));
  await s3.send(
    new UploadPartCommand({
      Bucket: bucket,
      Key: key,
      UploadId: started.UploadId,
      PartNumber: 1,
      Body: Buffer.alloc(4096, 1),
    }),
  );
}
