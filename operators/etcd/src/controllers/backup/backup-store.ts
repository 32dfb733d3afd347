// Opens the store a backup destination names, with the credentials from its Secret. The Secret's
// values go to the S3 client only: never to a log, an Event or a status message.
import { builtin, type KubeClient } from '@homeostat/reconcile';
import type { EtcdClusterSpecFields } from '../../api/etcd-cluster-types.ts';
import { openS3Store, type SnapshotStore } from '../../backup/s3-store.ts';

export type BackupDestination = NonNullable<EtcdClusterSpecFields['backup']>['destination'];

/** A destination the operator cannot use as written; the reason is a condition reason. */
export class DestinationError extends Error {
  override readonly name = 'DestinationError';
  readonly reason: string;
  constructor(reason: string, message: string) {
    super(message);
    this.reason = reason;
  }
}

/** Reads the credentials Secret of an S3 destination and opens the bucket. */
export async function openBackupStore(
  destination: BackupDestination,
  namespace: string,
  client: KubeClient,
): Promise<SnapshotStore> {
  const s3 = destination.s3;
  if (!s3) {
    throw new DestinationError(
      'DestinationNotSupported',
      'persistentVolumeClaim destinations are not carried out by this version of the operator yet; use s3',
    );
  }
  const secret = await client.find(builtin.secrets, s3.credentialsSecretName, namespace);
  const value = (key: string) => {
    const encoded = secret?.data?.[key];
    return encoded === undefined ? undefined : Buffer.from(encoded, 'base64').toString('utf8');
  };
  const accessKeyId = value('accessKeyId');
  const secretAccessKey = value('secretAccessKey');
  if (!secret || !accessKeyId || !secretAccessKey) {
    throw new DestinationError(
      'CredentialsUnusable',
      `Secret ${s3.credentialsSecretName} ${secret ? 'lacks accessKeyId or secretAccessKey' : 'does not exist'} (namespace ${namespace})`,
    );
  }
  const sessionToken = value('sessionToken');
  return openS3Store({
    bucket: s3.bucket,
    region: s3.region,
    forcePathStyle: s3.forcePathStyle,
    ...(s3.prefix === undefined ? {} : { prefix: s3.prefix }),
    ...(s3.endpoint === undefined ? {} : { endpoint: s3.endpoint }),
    credentials: { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) },
  });
}
