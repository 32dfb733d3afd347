// spec.backup and status.backup of a PostgreSQLCluster: continuous WAL archiving with pgBackRest
// to an S3-compatible bucket (ADR 0212, 0213). The destination is the shape every Homeostat
// operator shares (libs/operator-kit/src/api), plus what pgBackRest needs on top: https, and the
// CA of a server whose certificate a private CA signed.
import { Type } from '@sinclair/typebox';
import {
  cronSchedule,
  dnsSubdomainName,
  s3DestinationProperties,
  verifiedBackupProperties,
} from '@homeostat/operator-kit/api';

/** Bounds of archiveTimeout, the longest an idle primary's last commits wait before they are archived. */
export const archiveTimeoutBounds = { min: '30s', max: '1h', default: '5m' } as const;

/** What retention keeps when spec.backup.retention is left out. */
export const defaultRetention = { keepLast: 7 } as const;

/** `maxAge`: whole days or hours, e.g. 30d or 720h (CEL's duration() has no days, so not its format). */
export const maxAgePattern = '^[1-9][0-9]{0,3}[dh]$';

export const Retention = Type.Object(
  {
    keepLast: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 1000,
        description:
          'Keep at least this many of the newest scheduled backups that succeeded (and the WAL from the oldest of them on).',
      }),
    ),
    maxAge: Type.Optional(
      Type.String({
        maxLength: 5,
        description:
          'Keep every scheduled backup a restore to any moment of this last span needs: those taken within it, and the newest one taken before it. Whole days or hours, e.g. 30d or 720h.',
        'x-kubernetes-validations': [
          {
            rule: `self.matches('${maxAgePattern}')`,
            message:
              'backup.retention.maxAge must be a whole number of days or hours from 1 to 9999, e.g. 30d or 720h',
          },
        ],
      }),
    ),
  },
  {
    default: defaultRetention,
    description: `Which scheduled backups to keep, applied after each scheduled backup succeeds: a backup either rule keeps is kept, and the newest one always. The others are expired from the repository (with the WAL only they needed) and their PostgreSQLBackups deleted. Backups you create yourself are never expired. Default: keepLast ${defaultRetention.keepLast}; {} keeps every backup.`,
  },
);

export const BackupCa = Type.Object(
  {
    secretName: dnsSubdomainName('Secret in the same namespace that holds the CA certificate (PEM).'),
    key: Type.String({
      minLength: 1,
      maxLength: 253,
      pattern: '^[-._a-zA-Z0-9]+$',
      default: 'ca.crt',
      description: 'The key of the certificate in that Secret.',
    }),
  },
  {
    description:
      "The CA that signed the S3 server's certificate, when it is not one the image trusts (a private CA).",
  },
);

export const PostgresS3Destination = Type.Object(
  { ...s3DestinationProperties, ca: Type.Optional(BackupCa) },
  {
    description:
      'An S3-compatible bucket; the repository of the cluster is at <prefix> in it. The credentials Secret is read by the instance pods only (as environment variables), never by the operator.',
    'x-kubernetes-validations': [
      {
        rule: "!has(self.endpoint) || self.endpoint.startsWith('https://')",
        message:
          'backup.destination.s3.endpoint must be an https:// URL: pgBackRest reaches S3 over TLS only (for a server whose certificate a private CA signed, set ca to a Secret holding that CA)',
        fieldPath: '.endpoint',
      },
    ],
  },
);

export const BackupVerify = Type.Object(
  {
    schedule: cronSchedule(
      'When to run a restore drill, in cron syntax, in UTC (e.g. "0 4 * * 0", Sundays at 04:00, or @weekly). Each drill restores a base backup (the newest one no drill has restored yet, else the newest) and every WAL segment archived after it into a pod and a claim of its own, checks it, and removes both.',
      'verify.schedule',
    ),
    timeoutSeconds: Type.Optional(
      Type.Integer({
        minimum: 60,
        maximum: 604800,
        default: 21600,
        description:
          'A drill not done by then (a pod that cannot be scheduled, an image that cannot be pulled, a restore that hangs) fails with DrillTimedOut, and its pod and claim are deleted. Default 6 h: set it above the longest restore of your largest backup.',
      }),
    ),
  },
  {
    description:
      "Restore drills that prove the backups can be restored (status.lastVerifiedBackup and the BackupVerified condition). A drill reads the repository only; before it starts, the operator counts the source's tables and rows on a streaming standby whose replay it pauses for the count (never the primary), and the drill compares its own counts at that WAL position with them.",
  },
);

export const Backup = Type.Object(
  {
    destination: Type.Object(
      { s3: PostgresS3Destination },
      { description: 'Where the WAL archive and the base backups go.' },
    ),
    schedule: Type.Optional(
      cronSchedule(
        'When to take scheduled base backups (PostgreSQLBackups named <cluster>-<yyyymmddhhmm>, target PreferStandby), in cron syntax, in UTC: e.g. "0 3 * * *", or @daily. Unset: backups are taken only when you create a PostgreSQLBackup.',
      ),
    ),
    retention: Retention,
    archiveTimeout: Type.String({
      pattern: '^[0-9]{1,4}(s|m|h)$',
      default: archiveTimeoutBounds.default,
      description: `The longest a finished commit waits on an idle primary before its WAL segment is archived: the bound of what a restore from the archive can lose (the RPO) when few writes come. e.g. 5m, 90s; ${archiveTimeoutBounds.min} to ${archiveTimeoutBounds.max}. Shorter archives more, mostly empty, segments.`,
      'x-kubernetes-validations': [
        {
          rule: `duration(self) >= duration('${archiveTimeoutBounds.min}') && duration(self) <= duration('${archiveTimeoutBounds.max}')`,
          message: `backup.archiveTimeout must be between ${archiveTimeoutBounds.min} and ${archiveTimeoutBounds.max}: shorter fills the bucket with forced, mostly empty segments; longer leaves an idle cluster's last commits unarchived for that long`,
        },
      ],
    }),
    verify: Type.Optional(BackupVerify),
  },
  {
    description:
      'Continuous WAL archiving with pgBackRest to an S3-compatible bucket. Unset: no archiving. The status reports it in the ContinuousArchiving condition and status.backup.',
  },
);

export const BackupStatus = Type.Object(
  {
    lastArchivedWal: Type.Optional(Type.String({ description: 'The newest WAL segment archived.' })),
    lastArchivedTime: Type.Optional(
      Type.String({
        format: 'date-time',
        description:
          'When the primary archived it. Written at most every 10 s on a busy cluster; the metric homeostat_postgres_wal_archive_age_seconds is current.',
      }),
    ),
    failingWal: Type.Optional(
      Type.String({
        description: 'The WAL segment the primary fails to archive, while it does: the archive stops there.',
      }),
    ),
    failingSince: Type.Optional(
      Type.String({ format: 'date-time', description: 'When archiving that segment first failed.' }),
    ),
    lastBackupTime: Type.Optional(
      Type.String({
        format: 'date-time',
        description:
          'When the newest base backup of this cluster that succeeded (scheduled or not) became consistent; alert when it grows old.',
      }),
    ),
    lastBackupLabel: Type.Optional(Type.String({ description: "That backup's pgBackRest label." })),
    lastScheduledBackup: Type.Optional(
      Type.String({ description: 'The PostgreSQLBackup the schedule created last.' }),
    ),
    lastScheduledBackupTime: Type.Optional(
      Type.String({ format: 'date-time', description: 'The time it was scheduled for.' }),
    ),
    nextScheduledBackupTime: Type.Optional(
      Type.String({ format: 'date-time', description: 'When the schedule takes the next backup.' }),
    ),
  },
  {
    description:
      "The WAL archive, as the primary's archiver reports it (pg_stat_archiver), and the base backups: the newest one and the schedule's.",
  },
);

export const RecoveryTarget = Type.Object(
  {
    time: Type.Optional(
      Type.String({
        format: 'date-time',
        description:
          'Replay every transaction committed up to this moment (RFC 3339, e.g. 2026-11-27T04:40:50Z), and none after.',
      }),
    ),
    lsn: Type.Optional(
      Type.String({
        pattern: '^[0-9A-Fa-f]{1,8}/[0-9A-Fa-f]{1,8}$',
        description: 'Replay up to this WAL position (e.g. 0/3000028), included.',
      }),
    ),
    restorePoint: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 63,
        description:
          "Replay up to the restore point of this name (made with pg_create_restore_point('name')).",
      }),
    ),
  },
  {
    description: 'Where the replay stops; unset: at the end of the archive, every archived commit back.',
    'x-kubernetes-validations': [
      {
        rule: '(has(self.time) ? 1 : 0) + (has(self.lsn) ? 1 : 0) + (has(self.restorePoint) ? 1 : 0) == 1',
        message: 'bootstrap.recovery.target takes exactly one of time, lsn or restorePoint',
      },
    ],
  },
);

export const Recovery = Type.Object(
  {
    source: Type.Object(
      {
        clusterName: Type.String({
          minLength: 1,
          maxLength: 63,
          pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$',
          description:
            "The cluster the backups were taken of (its name is the repository's stanza); it need not exist any more.",
        }),
        destination: Type.Object(
          { s3: PostgresS3Destination },
          { description: "Where that cluster's backup.destination put its repository. Only read." },
        ),
      },
      { description: 'The repository to recover from.' },
    ),
    backup: Type.Optional(
      Type.String({
        pattern: '^[0-9]{8}-[0-9]{6}F$',
        description:
          "The backup to start from, by its label (a PostgreSQLBackup's status.label). Unset: the newest that ended before the target (the newest of all without a target).",
      }),
    ),
    target: Type.Optional(RecoveryTarget),
  },
  {
    description:
      "Make the new cluster from a backup of another (or an earlier) cluster and the WAL archived after it, up to a target, instead of an empty database. The first instance restores and replays, then is promoted; the others clone it. The roles' passwords are this cluster's Secrets'.",
  },
);

export const VerifiedBackup = Type.Object(
  {
    // The shape every Homeostat operator reports a drill in, with PostgreSQL's own meaning of each.
    ...verifiedBackupProperties,
    backup: Type.String({
      maxLength: 253,
      description: "The backup the drill restored (pgBackRest's label).",
    }),
    restorePoint: Type.String({
      format: 'date-time',
      description:
        'The last transaction the restored copy holds: the newest backup plus every WAL segment archived after it.',
    }),
    recoveryPointSeconds: Type.Number({
      minimum: 0,
      description:
        'From restorePoint to the end of the drill: what a restore then would have lost (RPO), measured. On an idle cluster it grows with the idle time, not with any loss.',
    }),
    replayedThrough: Type.String({ description: 'The last WAL segment the drill replayed.' }),
    databases: Type.Array(
      Type.Object({
        name: Type.String(),
        tables: Type.Integer({ minimum: 0 }),
        rows: Type.Integer({ minimum: 0 }),
      }),
      {
        maxItems: 20,
        description:
          "Each database of the restored copy, with its tables and rows (the first 20): at comparedWithSource.lsn when the counts were compared (then the source's counts too), else at the end of the archive.",
      },
    ),
    comparedWithSource: Type.Optional(
      Type.Object(
        {
          result: Type.Union([Type.Literal('Equal'), Type.Literal('NotCompared')], {
            description:
              "Equal: every database held the same tables and rows, table by table, as the source at lsn. NotCompared: the source was not counted (reason says why); the drill's other checks still passed.",
          }),
          lsn: Type.Optional(
            Type.String({
              description:
                'The WAL position L both sides were counted at: the source on a standby whose replay was paused there, the copy restored to just before the first record at or after it.',
            }),
          ),
          standby: Type.Optional(Type.String({ description: 'The standby the source was counted on.' })),
          reason: Type.Optional(
            Type.String({ maxLength: 1024, description: 'Why the counts were not compared.' }),
          ),
        },
        { description: "The drill's counts against the source's at one WAL position (ADR 0221)." },
      ),
    ),
  },
  { description: 'The last restore drill that succeeded.' },
);

export const RestoreDrill = Type.Object(
  {
    startedAt: Type.String({ format: 'date-time', description: 'When the last drill started.' }),
    pod: Type.Optional(Type.String({ description: 'The pod of the drill under way.' })),
  },
  { description: 'The restore drill under way, or the last one: when the schedule ran last.' },
);
