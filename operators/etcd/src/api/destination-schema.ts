// Where backups are written and read: an S3-compatible bucket or a PersistentVolumeClaim. Shared by
// EtcdCluster (scheduled backups, bootstrap from a backup) and EtcdBackup.
import { Type } from '@sinclair/typebox';

const dnsSubdomain = (description: string) =>
  Type.String({
    minLength: 1,
    maxLength: 253,
    pattern: '^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$',
    description,
  });

export const S3Destination = Type.Object(
  {
    bucket: Type.String({
      minLength: 3,
      maxLength: 63,
      pattern: '^[a-z0-9][a-z0-9.-]*[a-z0-9]$',
      description: 'Bucket name.',
    }),
    prefix: Type.Optional(
      Type.String({
        maxLength: 512,
        pattern: '^[^/].*$',
        description: 'Key prefix of every backup, e.g. "prod/etcd/". Must not start with "/".',
      }),
    ),
    endpoint: Type.Optional(
      Type.String({
        maxLength: 512,
        pattern: '^https?://[^\\s]+$',
        description:
          'URL of an S3-compatible server (MinIO, versitygw, Ceph RGW...). Leave empty for Amazon S3.',
      }),
    ),
    region: Type.String({ maxLength: 64, default: 'us-east-1', description: 'Region of the bucket.' }),
    forcePathStyle: Type.Boolean({
      default: false,
      description:
        'Address the bucket as <endpoint>/<bucket> rather than <bucket>.<endpoint>; most S3-compatible servers need true.',
    }),
    credentialsSecretName: dnsSubdomain(
      'Secret in the same namespace with the keys accessKeyId and secretAccessKey (and optionally sessionToken).',
    ),
  },
  { description: 'An S3-compatible bucket.' },
);

export const PvcDestination = Type.Object(
  {
    claimName: dnsSubdomain('PersistentVolumeClaim in the same namespace.'),
    directory: Type.Optional(
      Type.String({
        maxLength: 512,
        pattern: '^[^/].*$',
        'x-kubernetes-validations': [
          { rule: "!self.split('/').exists(p, p == '..')", message: 'directory must not contain ".."' },
        ],
        description: 'Directory inside the volume, relative to its root; the root when empty.',
      }),
    ),
  },
  {
    description:
      'A PersistentVolumeClaim (ReadWriteOnce is enough: backups are written by one pod at a time).',
  },
);

/** Exactly one of `s3` and `persistentVolumeClaim`, described as the field that holds it. */
export const backupDestinationWith = (description: string) =>
  Type.Object(
    {
      s3: Type.Optional(S3Destination),
      persistentVolumeClaim: Type.Optional(PvcDestination),
    },
    {
      description,
      'x-kubernetes-validations': [
        {
          rule: 'has(self.s3) != has(self.persistentVolumeClaim)',
          message: 'set exactly one of s3 and persistentVolumeClaim',
        },
      ],
    },
  );

export const BackupDestination = backupDestinationWith(
  'Where backups go: set exactly one of s3 and persistentVolumeClaim.',
);
