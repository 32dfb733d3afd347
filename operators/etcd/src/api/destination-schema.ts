// Where backups are written and read: an S3-compatible bucket or a PersistentVolumeClaim. Shared by
// EtcdCluster (scheduled backups, bootstrap from a backup) and EtcdBackup.
import { Type } from '@sinclair/typebox';
import { dnsSubdomainName, S3Destination } from '@homeostat/operator-kit/api';

// The S3 shape is shared with the PostgreSQL operator (libs/operator-kit/src/api).
export { S3Destination };

export const PvcDestination = Type.Object(
  {
    claimName: dnsSubdomainName('PersistentVolumeClaim in the same namespace.'),
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
