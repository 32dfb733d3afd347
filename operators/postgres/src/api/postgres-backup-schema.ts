// The PostgreSQLBackup API: one full base backup of one cluster, taken once, into the cluster's
// pgBackRest repository (spec.backup of the PostgreSQLCluster; ADR 0215).
import { Type } from '@sinclair/typebox';
import { conditionsField, observedGenerationField, phaseField } from '@homeostat/reconcile';
import { backupVerification } from '@homeostat/operator-kit/api';

export const backupTargets = ['PreferStandby', 'Primary'] as const;

export const PostgresBackupSpec = Type.Object(
  {
    clusterName: Type.String({
      minLength: 1,
      maxLength: 63,
      description: 'The PostgreSQLCluster in this namespace to back up; it must set spec.backup.',
    }),
    target: Type.Union(
      backupTargets.map((t) => Type.Literal(t)),
      {
        default: 'PreferStandby',
        description:
          "Where the files are read: PreferStandby (the default) copies them from a streaming standby, so the primary only starts and stops the backup and its disks carry no more load; with no standby streaming, from the primary. Primary: always from the primary (a standby's files lag it by its replay delay, which a backup waits out).",
      },
    ),
  },
  {
    description: 'A backup is taken once: to take another, create another PostgreSQLBackup.',
    'x-kubernetes-validations': [
      {
        rule: 'self == oldSelf',
        message: 'spec is immutable: a backup is taken once; create a new PostgreSQLBackup for another one',
        reason: 'FieldValueForbidden',
      },
    ],
  },
);

export const postgresBackupPhases = ['Pending', 'Running', 'Succeeded', 'Failed'] as const;

const lsn = (description: string) =>
  Type.Optional(Type.String({ pattern: '^[0-9A-F]{1,8}/[0-9A-F]{1,8}$', description }));

export const PostgresBackupStatus = Type.Object({
  observedGeneration: observedGenerationField(),
  phase: phaseField(postgresBackupPhases, 'Pending, Running, Succeeded or Failed; the conditions say why.'),
  conditions: conditionsField('Complete and Failed (KEP-1623 conditions; see the guide).'),
  clusterUid: Type.Optional(
    Type.String({ description: 'metadata.uid of the PostgreSQLCluster the backup was taken of.' }),
  ),
  source: Type.Optional(
    Type.Union([Type.Literal('Standby'), Type.Literal('Primary')], {
      description: 'Where the files were read: from a standby, or from the primary.',
    }),
  ),
  label: Type.Optional(
    Type.String({ description: "pgBackRest's label of the backup (what a restore names it by)." }),
  ),
  type: Type.Optional(Type.String({ description: 'full (every backup is a full one).' })),
  startedAt: Type.Optional(
    Type.String({
      format: 'date-time',
      description: 'When the backup began (the checkpoint), per pgBackRest.',
    }),
  ),
  finishedAt: Type.Optional(
    Type.String({
      format: 'date-time',
      description: 'When it ended: from here on it is consistent, the earliest time it can be restored to.',
    }),
  ),
  beginLsn: lsn('The WAL position the backup begins at.'),
  endLsn: lsn('The WAL position from which it is consistent.'),
  beginWal: Type.Optional(Type.String({ description: 'The first WAL segment the backup needs.' })),
  endWal: Type.Optional(Type.String({ description: 'The last WAL segment it needs to be consistent.' })),
  databaseBytes: Type.Optional(Type.Integer({ description: 'Bytes of the database copied.' })),
  storedBytes: Type.Optional(
    Type.Integer({ description: 'Bytes the backup takes in the bucket (compressed).' }),
  ),
  toolVersion: Type.Optional(Type.String({ description: 'The pgBackRest version that took it.' })),
  verification: Type.Optional(
    backupVerification({
      result:
        'Verified: a restore drill restored this backup and the WAL archived after it, and checked the copy. Failed: the drill did not (reason and message say why).',
      restoreSeconds: 'How long its restore and replay took (the RTO, measured).',
      description:
        "The last restore drill of this backup (the cluster's spec.backup.verify). Each drill takes the newest backup never drilled, else the newest: every backup is proven once, the newest first.",
    }),
  ),
});
