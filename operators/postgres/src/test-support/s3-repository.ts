// A real S3 server (versitygw over TLS, loopback) with one bucket, and the two Secrets a
// PostgreSQLCluster's spec.backup names in `namespace`: the credentials and the server's CA. What
// every controller test of archiving, backups and recovery starts from.
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { builtin, type KubeClient } from '@homeostat/reconcile';
import { startS3Server, type S3TestServer } from '@homeostat/testing/s3';

/** A Secret's data from plain values. */
export const secretData = (values: Record<string, string>): Record<string, string> =>
  Object.fromEntries(Object.entries(values).map(([k, v]) => [k, Buffer.from(v).toString('base64')]));

export interface S3Repository {
  readonly s3: S3TestServer;
  /** spec.backup.destination.s3 (or a recovery source's) for a repository under `prefix`. */
  destination(prefix: string): Record<string, unknown>;
  /**
   * Deletes archived WAL `segment` of `stanza` (PostgreSQL 15's archive id, 15-1) under `prefix`
   * straight from versitygw's files: a segment lost from the bucket. Throws when it is not there.
   */
  removeArchivedSegment(prefix: string, stanza: string, segment: string): void;
  /** Puts `secretAccessKey` in the credentials Secret (what a rotation or a wrong key does). */
  setSecretKey(secretAccessKey: string): Promise<void>;
  stop(): Promise<void>;
}

/** Starts the server and creates the Secrets `s3-credentials` and `s3-ca` in `namespace`. */
export async function startS3Repository(
  client: KubeClient,
  namespace: string,
  bucket: string,
): Promise<S3Repository> {
  const s3 = await startS3Server({ buckets: [bucket], tls: true });
  const secret = (name: string, values: Record<string, string>) =>
    client.create(builtin.secrets, { metadata: { name, namespace }, data: secretData(values) });
  await secret('s3-credentials', { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey });
  await secret('s3-ca', { 'ca.crt': readFileSync(s3.caFile ?? '', 'utf8') });
  return {
    s3,
    removeArchivedSegment(prefix, stanza, segment) {
      // versitygw keeps each object as a file: <bucket>/<key>.
      const dir = join(s3.rootDir, bucket, prefix, 'archive', stanza, '15-1', segment.slice(0, 16));
      const file = existsSync(dir) ? readdirSync(dir).find((f) => f.startsWith(`${segment}-`)) : undefined;
      if (!file) throw new Error(`segment ${segment} is not in ${dir}`);
      rmSync(join(dir, file));
    },
    destination: (prefix) => ({
      bucket,
      prefix,
      endpoint: s3.endpoint,
      region: s3.region,
      forcePathStyle: true,
      credentialsSecretName: 's3-credentials',
      ca: { secretName: 's3-ca' },
    }),
    setSecretKey: async (secretAccessKey) => {
      await client.patch(
        builtin.secrets,
        's3-credentials',
        namespace,
        { data: secretData({ secretAccessKey }) },
        { patchType: 'merge' },
      );
    },
    stop: () => s3.stop(),
  };
}
