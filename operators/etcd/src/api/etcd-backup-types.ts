// TypeScript types of the EtcdBackup API, derived from the TypeBox schemas (never written by hand).
import type { Static } from '@sinclair/typebox';
import { resourceType, type KubeObject } from '@homeostat/reconcile';
import { apiVersion } from './api-group.ts';
import type { EtcdBackupSpec, EtcdBackupStatus } from './etcd-backup-schema.ts';

export type EtcdBackupSpecFields = Static<typeof EtcdBackupSpec>;

export type EtcdBackupStatusFields = Static<typeof EtcdBackupStatus>;

/** An EtcdBackup as read from the API server. */
export interface EtcdBackup extends KubeObject {
  spec: EtcdBackupSpecFields;
  status?: EtcdBackupStatusFields;
}

/** The EtcdBackup kind, for the client and the caches. */
export const etcdBackups = resourceType<EtcdBackup>(apiVersion, 'EtcdBackup', 'etcdbackups');

/** Condition types of an EtcdBackup. */
export const backupConditionTypes = {
  /** The snapshot is written, its sha256 checked, and committed at status.location. */
  complete: 'Complete',
  /** The backup cannot be taken; the message says why. Nothing is left at the destination. */
  failed: 'Failed',
} as const;
