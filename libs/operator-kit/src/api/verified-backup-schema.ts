// What a restore drill proved, in one shape for every operator that backs up (the etcd operator's
// snapshots, the PostgreSQL operator's pgBackRest repository): the cluster's record of the last
// drill that passed, and each backup's verdict of the last drill of it. A dashboard or an alert
// reads the same figures and the same verdicts from either. An operator adds what identifies a
// restore point in its own terms (an etcd revision, a PostgreSQL LSN) rather than a second copy
// of these fields.
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

/** What the descriptions of a backup's `status.verification` say in an operator's own terms. */
export interface BackupVerificationTerms {
  /** What `result` Verified and Failed mean for this operand. */
  readonly result: string;
  /** What `restoreSeconds` measured. */
  readonly restoreSeconds: string;
  /** The field's own description: what runs the drills, and which backup each takes. */
  readonly description: string;
}

/** A backup's `status.verification`: the verdict of the last restore drill of it, one shape for every operator. */
export const backupVerification = (terms: BackupVerificationTerms) =>
  Type.Object(
    {
      result: Type.Union([Type.Literal('Verified'), Type.Literal('Failed')], { description: terms.result }),
      drilledAt: Type.String({ format: 'date-time', description: 'When that drill ended.' }),
      restoreSeconds: Type.Optional(Type.Number({ minimum: 0, description: terms.restoreSeconds })),
      reason: Type.Optional(
        Type.String({ maxLength: 128, description: 'Why the drill failed (CamelCase).' }),
      ),
      message: Type.Optional(Type.String({ maxLength: 1024, description: 'Why the drill failed.' })),
    },
    { description: terms.description },
  );
