// TypeScript types of the PostgreSQLBackup API, derived from the TypeBox schemas (never written by hand).
import type { Static } from '@sinclair/typebox';
import { resourceType, type KubeObject } from '@homeostat/reconcile';
import { group, version } from './postgres-cluster-schema.ts';
import type { PostgresBackupSpec, PostgresBackupStatus } from './postgres-backup-schema.ts';

export type PostgresBackupSpecFields = Static<typeof PostgresBackupSpec>;
export type PostgresBackupStatusFields = Static<typeof PostgresBackupStatus>;

/** A PostgreSQLBackup as read from the API server (defaults applied). */
export interface PostgresBackup extends KubeObject {
  spec: PostgresBackupSpecFields;
  status?: PostgresBackupStatusFields;
}

/** The PostgreSQLBackup kind, for the client and the caches. */
export const postgresBackups = resourceType<PostgresBackup>(
  `${group}/${version}`,
  'PostgreSQLBackup',
  'postgresqlbackups',
);

/** Condition types of a PostgreSQLBackup. */
export const backupConditionTypes = {
  /** The backup is in the repository with the WAL it needs to be consistent: it can be restored. */
  complete: 'Complete',
  /** The backup could not be taken; the message says why. */
  failed: 'Failed',
} as const;
