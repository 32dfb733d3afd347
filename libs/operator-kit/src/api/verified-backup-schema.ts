// What a restore drill proved, in one shape for every operator that backs up (the etcd operator's
// snapshots, the PostgreSQL operator's pgBackRest repository): a dashboard or an alert reads the
// same four figures from either. An operator adds what identifies a restore point in its own
// terms (an etcd revision, a PostgreSQL LSN) rather than a second copy of these fields.
import { Type } from '@sinclair/typebox';

/** The fields of `status.lastVerifiedBackup`, for an operator that composes them with its own. */
export const verifiedBackupProperties = {
  backup: Type.String({ maxLength: 253, description: 'The backup the drill restored (its name).' }),
  restorePoint: Type.String({
    format: 'date-time',
    description: 'The moment the restored data is from (when the backup was taken).',
  }),
  verifiedAt: Type.String({ format: 'date-time', description: 'When the drill proved the restored copy.' }),
  restoreSeconds: Type.Number({
    minimum: 0,
    description:
      'Measured recovery time (RTO): from the start of the drill until the restored copy answered and checked.',
  }),
  recoveryPointSeconds: Type.Number({
    minimum: 0,
    description:
      'Measured recovery point (RPO): how old the restored data was when the drill started (what a restore then would have lost).',
  }),
};
