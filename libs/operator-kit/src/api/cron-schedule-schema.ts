// The cron schedule field of scheduled backups, one shape for every operator that schedules them
// (the etcd operator's EtcdBackups, the PostgreSQL operator's PostgreSQLBackups), so a user writes
// the same expression for both and the API server refuses the same mistakes with the same words.
import { Type } from '@sinclair/typebox';

/** Five cron fields, or one of the @ shorthands; cron-parser checks the fields themselves at run time. */
export const cronSchedulePattern =
  '^(@(yearly|annually|monthly|weekly|daily|midnight|hourly)|[^ ]+( +[^ ]+){4})$';

/** An optional cron schedule (UTC) as a CRD field, validated by CEL with a message a user reads. */
export const cronScheduleField = (description: string) =>
  Type.Optional(
    Type.String({
      maxLength: 128,
      'x-kubernetes-validations': [
        {
          rule: `self.matches('${cronSchedulePattern}')`,
          message:
            'schedule must be a cron expression of five fields (minute hour day-of-month month day-of-week), e.g. "0 */6 * * *", or one of @hourly, @daily, @weekly, @monthly, @yearly',
        },
      ],
      description,
    }),
  );
