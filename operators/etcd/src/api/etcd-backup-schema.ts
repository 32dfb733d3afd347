// The EtcdBackup API: one snapshot of one cluster, taken once, to a destination.
import { Type } from '@sinclair/typebox';
import { conditionsField, observedGenerationField, phaseField } from '@homeostat/reconcile';
import { backupVerification } from '@homeostat/operator-kit/api';
import { BackupDestination, backupDestinationWith } from './destination-schema.ts';

export const EtcdBackupSpec = Type.Object(
  {
    clusterName: Type.String({
      minLength: 1,
      maxLength: 63,
      description: 'The EtcdCluster in this namespace to back up.',
    }),
    destination: Type.Optional(BackupDestination),
  },
  {
    description:
      "A backup is taken once: to take another, create another EtcdBackup. Without destination, the cluster's backup.destination is used.",
    'x-kubernetes-validations': [
      {
        rule: 'self == oldSelf',
        message: 'spec is immutable: a backup is taken once; create a new EtcdBackup for another one',
        reason: 'FieldValueForbidden',
      },
    ],
  },
);

export const backupPhases = ['Pending', 'Running', 'Succeeded', 'Failed'] as const;

export const EtcdBackupStatus = Type.Object({
  observedGeneration: observedGenerationField(),
  phase: phaseField(backupPhases, 'Pending, Running, Succeeded or Failed; the conditions say why.'),
  conditions: conditionsField('Complete and Failed (KEP-1623 conditions; see the guide).'),
  location: Type.Optional(
    Type.String({ description: 'Where the snapshot is: s3://bucket/key or pvc://claim/path.' }),
  ),
  key: Type.Optional(
    Type.String({
      description:
        'Object key in the bucket, or file path in the claim (what bootstrap.fromBackup.location.key takes).',
    }),
  ),
  destination: Type.Optional(
    backupDestinationWith(
      "Where the snapshot was written, as it was then (the backup's own destination or its cluster's): restores and recovery read it there, whatever the cluster's spec says today.",
    ),
  ),
  clusterUid: Type.Optional(
    Type.String({
      description:
        'metadata.uid of the EtcdCluster the snapshot was taken from: disaster recovery restores only backups of that very cluster, never of an earlier one of the same name.',
    }),
  ),
  etcdClusterId: Type.Optional(
    Type.String({ description: 'The etcd cluster ID (hex) of the cluster the snapshot was taken from.' }),
  ),
  sizeBytes: Type.Optional(
    Type.Integer({ description: 'Bytes in the snapshot file, its sha256 trailer included.' }),
  ),
  sha256: Type.Optional(
    Type.String({
      description:
        'Hex sha256 of the database, checked against the snapshot stream before the file was committed.',
    }),
  ),
  revision: Type.Optional(Type.String({ description: 'The etcd revision the snapshot holds.' })),
  hashKV: Type.Optional(
    Type.String({
      pattern: '^[0-9]{1,10}$',
      description:
        "etcd's HashKV of the source member at revision, read once the snapshot was taken: a restore drill restores the snapshot and compares the restored copy's HashKV at the same revision with it.",
    }),
  ),
  compactRevision: Type.Optional(
    Type.String({
      pattern: '^-?[0-9]{1,20}$',
      description: 'The compaction revision hashKV was counted from (-1: never compacted).',
    }),
  ),
  etcdVersion: Type.Optional(
    Type.String({ description: 'Version of the member the snapshot was taken from.' }),
  ),
  member: Type.Optional(Type.String({ description: 'Name of the member the snapshot was taken from.' })),
  startedAt: Type.Optional(Type.String({ format: 'date-time' })),
  finishedAt: Type.Optional(Type.String({ format: 'date-time' })),
  verification: Type.Optional(
    backupVerification({
      result:
        'Verified: a restore drill restored this backup into a scratch etcd and its HashKV was the one recorded. Failed: it was not (reason and message say why).',
      restoreSeconds: 'How long the restore took until the copy answered.',
      description:
        "The last restore drill of this backup (the cluster's spec.backup.verify or its verify-backup annotation). Each drill takes the newest backup never drilled, else the newest: every backup is proven once, the newest first.",
    }),
  ),
});
