// @homeostat/operator-kit/api: CRD schema pieces more than one operator's API uses.
export { cronSchedule, cronSchedulePattern } from './cron-schedule-schema.ts';
export {
  dnsSubdomainName,
  S3Destination,
  s3CredentialKeys,
  s3DestinationProperties,
} from './s3-destination-schema.ts';
export {
  backupVerification,
  verifiedBackupProperties,
  type BackupVerificationTerms,
} from './verified-backup-schema.ts';
export { spreadSchema, type SpreadPolicy, type SpreadTerms } from './spread-schema.ts';
