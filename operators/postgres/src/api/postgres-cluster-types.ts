// TypeScript types of the PostgreSQLCluster API, derived from the TypeBox schemas (never written by hand).
import type { Static } from '@sinclair/typebox';
import { resourceType, type KubeObject } from '@homeostat/reconcile';
import {
  group,
  version,
  type InstanceStatus,
  type Operation,
  type PostgresClusterSpec,
  type PostgresClusterStatus,
} from './postgres-cluster-schema.ts';

export type PostgresClusterSpecFields = Static<typeof PostgresClusterSpec>;
export type InstanceStatusFields = Static<typeof InstanceStatus>;
export type OperationFields = Static<typeof Operation>;

export type BackupSpecFields = NonNullable<PostgresClusterSpecFields['backup']>;
export type BackupStatusFields = NonNullable<PostgresClusterStatusFields['backup']>;

export type PostgresClusterStatusFields = Static<typeof PostgresClusterStatus>;

/** A PostgreSQLCluster as read from the API server (defaults applied, so every defaulted field is set). */
export interface PostgresCluster extends KubeObject {
  spec: PostgresClusterSpecFields;
  status?: PostgresClusterStatusFields;
}

/** The PostgreSQLCluster kind, for the client and the caches. */
export const postgresClusters = resourceType<PostgresCluster>(
  `${group}/${version}`,
  'PostgreSQLCluster',
  'postgresqlclusters',
);

/** Condition types, each with one meaning (see the operator guide). */
export const conditionTypes = {
  /** A primary takes writes through the -rw Service. */
  available: 'Available',
  /** The operator is creating, scaling, failing over, switching over or waiting for instances. */
  progressing: 'Progressing',
  /** Something needs a human or keeps the cluster short of its spec: a refused write, a refused switchover, instances not ready. */
  degraded: 'Degraded',
  /** spec.backup is set and the primary archives its WAL (False: the reason names the failing segment). */
  continuousArchiving: 'ContinuousArchiving',
  /** spec.backup.verify is set and the last restore drill restored and checked the newest backup (False: why it did not). */
  backupVerified: 'BackupVerified',
} as const;
