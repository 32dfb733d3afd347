// The backup engine the controller will call (ADR 0212): pgBackRest to an S3-compatible bucket.
export { credentialValues, type S3Credentials, type S3Destination } from './destination.ts';
export {
  credentialEnvironment,
  renderCredentialsConfig,
  renderPgBackRestConfig,
  type PgBackRestInstance,
  type PgBackRestSettings,
} from './pgbackrest-config.ts';
export { archiveCommand, confLine, restoreCommand, type PgBackRestTarget } from './wal-commands.ts';
export { BackupToolError, runPgBackRest, type PgBackRestInvocation } from './pgbackrest-cli.ts';
export { redactToolOutput, toolFailureSummary } from './redact.ts';
export {
  archiveEndTime,
  parseRepositoryInfo,
  readRepository,
  type BackupRecord,
  type RepositoryState,
} from './repository-info.ts';
export { ensureStanza, takeBaseBackup } from './base-backup.ts';
export { applyRetention, backupsToExpire, type RetainedBackup, type RetentionPolicy } from './retention.ts';
export { planRecovery, type ArchiveEnd, type RecoveryPlan, type RecoveryTarget } from './recovery-target.ts';
export { recoverySettings, renderRecoverySettings, type RecoverySettings } from './recovery-settings.ts';
export { restoreBackupFiles, writeRecoverySettings } from './restore.ts';
