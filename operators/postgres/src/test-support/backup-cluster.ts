// What the base-backup controller tests share: the S3 repository (s3-repository.ts), the operator,
// and a two-instance cluster archiving to the bucket with a primary and a streaming standby ready; then PostgreSQLBackups created, waited for, and
// the repository read where versitygw keeps it (objects are files under its rootDir).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { waitUntil } from '@homeostat/testing';
import type { S3TestServer } from '@homeostat/testing/s3';
import type { KubeClient, Manager } from '@homeostat/reconcile';
import { postgresBackups, type PostgresBackup } from '../api/postgres-backup-types.ts';
import { postgresClusters, type PostgresCluster } from '../api/postgres-cluster-types.ts';
import type { BackupScheduleOptions } from '../controllers/backup/backup-schedule-controller.ts';
import type { RestoreDrillControllerOptions } from '../controllers/backup/restore-drill-controller.ts';
import { createCluster, podOperator, prepareNamespace } from './pod-cluster.ts';
import type { PodProcesses } from './pod-processes.ts';
import { startS3Repository, type S3Repository } from './s3-repository.ts';

export interface BackupClusterOptions {
  readonly kubeConfig: KubeConfig;
  readonly client: KubeClient;
  readonly namespace: string;
  readonly cluster: string;
  readonly bucket: string;
  readonly prefix: string;
  readonly log: Logger;
  readonly pods: PodProcesses;
  /** spec.backup beside the destination (schedule, retention). */
  readonly backup?: Record<string, unknown>;
  /** The schedule controller's options (its clock). */
  readonly schedule?: Partial<BackupScheduleOptions>;
  /** The restore drill controller's options (its clock). */
  readonly drills?: Partial<RestoreDrillControllerOptions>;
  readonly poll: { timeoutMs: number; intervalMs: number };
}

/** The running S3 server and operator of a backup test. */
export interface BackupCluster {
  readonly s3: S3TestServer;
  /** The bucket's Secrets (setSecretKey for a wrong key, or the right one back). */
  readonly s3Repository: S3Repository;
  /** The operator, started; replaced by `restartOperator`. */
  manager: Manager;
  /** Stops the operator and starts a new one (same options): nothing of the first is remembered. */
  restartOperator(): Promise<void>;
  /** The directory of the cluster's repository in the bucket. */
  readonly repository: string;
  stop(): Promise<void>;
}

/** Starts the S3 server and the operator, and a two-instance cluster archiving to the bucket, ready. */
export async function startBackupCluster(options: BackupClusterOptions): Promise<BackupCluster> {
  const { client, namespace, cluster, pods } = options;
  await prepareNamespace(options.kubeConfig, client, namespace);
  const s3Repository = await startS3Repository(client, namespace, options.bucket);
  const { s3 } = s3Repository;
  const operator = () =>
    podOperator(
      options.kubeConfig,
      namespace,
      options.log,
      pods,
      {},
      options.drills ?? {},
      options.schedule ?? {},
    );
  const bed: BackupCluster = {
    s3,
    s3Repository,
    manager: operator(),
    repository: join(s3.rootDir, options.bucket, options.prefix),
    async restartOperator() {
      await bed.manager.stop();
      bed.manager = operator();
      await bed.manager.start();
    },
    async stop() {
      await bed.manager.stop();
      await pods.stop();
      await s3Repository.stop();
    },
  };
  await bed.manager.start();
  await createCluster(client, namespace, cluster, {
    instances: 2,
    backup: {
      destination: { s3: s3Repository.destination(options.prefix) },
      ...options.backup,
    },
  });
  await pods.start();
  await waitUntil(
    'a primary and a streaming standby',
    async () => {
      const statuses =
        (await client.get(postgresClusters, cluster, namespace)).status?.instanceStatuses ?? [];
      return (
        statuses.some((i) => i.role === 'primary' && i.ready) &&
        statuses.some((i) => i.role === 'replica' && i.ready)
      );
    },
    options.poll,
  );
  return bed;
}

/** Creates a PostgreSQLBackup as a user writes it (partial: the API server fills in the defaults). */
export async function createBackup(
  client: KubeClient,
  namespace: string,
  name: string,
  spec: Record<string, unknown>,
): Promise<void> {
  await client.create(postgresBackups, {
    metadata: { name, namespace },
    spec,
  } as unknown as PostgresBackup);
}

/** Waits until the backup has finished (Succeeded or Failed) and returns it. */
export async function finishedBackup(
  client: KubeClient,
  namespace: string,
  name: string,
  poll: { timeoutMs: number; intervalMs: number; describe?: () => string },
): Promise<PostgresBackup> {
  let last: PostgresBackup | undefined;
  await waitUntil(
    `PostgreSQLBackup ${name} finished`,
    async () => {
      last = await client.find(postgresBackups, name, namespace);
      return last?.status?.phase === 'Succeeded' || last?.status?.phase === 'Failed';
    },
    { ...poll, describe: () => `${JSON.stringify(last?.status, null, 1)}\n${poll.describe?.() ?? ''}` },
  );
  if (!last) throw new Error('unreachable');
  return last;
}

/** The labels of the backups in the repository's directory (each backup is a directory of its label). */
export function repositoryBackupLabels(repository: string, stanza: string): string[] {
  const dir = join(repository, 'backup', stanza);
  return readdirSync(dir)
    .filter((name) => /^\d{8}-\d{6}F$/.test(name) && statSync(join(dir, name)).isDirectory())
    .sort();
}

/** The labels pgBackRest's backup.info lists as current. */
export function backupInfoLabels(repository: string, stanza: string): string[] {
  const text = readFileSync(join(repository, 'backup', stanza, 'backup.info'), 'utf8');
  const section = text.split(/^\[backup:current\]$/m)[1]?.split(/^\[/m)[0] ?? '';
  return [...section.matchAll(/^(\d{8}-\d{6}F)=/gm)].map((m) => m[1] ?? '').sort();
}

/** The WAL segments in the repository's archive (names only, 24 hex digits). */
export function archivedSegments(repository: string, stanza: string): string[] {
  const segments: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (/^[0-9A-F]{24}-/.test(name)) segments.push(name.slice(0, 24));
    }
  };
  walk(join(repository, 'archive', stanza));
  return segments.sort();
}

/** The cluster as stored. */
export const readCluster = (client: KubeClient, namespace: string, name: string): Promise<PostgresCluster> =>
  client.get(postgresClusters, name, namespace);
