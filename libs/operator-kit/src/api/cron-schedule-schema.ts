// The cron schedule fields of backups, one shape for every operator that schedules them (the etcd
// operator's EtcdBackups and restore drills, the PostgreSQL operator's PostgreSQLBackups), so a
// user writes the same expression for all and the API server refuses the same mistakes with the
// same words.
import { Type } from '@sinclair/typebox';

/**
 * Five cron fields, or one of the @ shorthands; cron-parser checks the fields themselves at run
 * time (no backslashes: the pattern sits in a CEL string literal).
 */
export const cronSchedulePattern =
  '^(@(yearly|annually|monthly|weekly|daily|midnight|hourly)|[^ ]+( +[^ ]+){4})$';

/** A cron schedule (UTC) as a CRD field, validated by CEL; `what` names the field in the message. */
export const cronSchedule = (description: string, what = 'schedule') =>
  Type.String({
    maxLength: 128,
    'x-kubernetes-validations': [
      {
        rule: `self.matches('${cronSchedulePattern}')`,
        message: `${what} must be a cron expression of five fields (minute hour day-of-month month day-of-week), e.g. "0 */6 * * *", or one of @hourly, @daily, @weekly, @monthly, @yearly`,
      },
    ],
    description,
  });
