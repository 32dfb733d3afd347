// PostgreSQLBackup end to end: a real kube-apiserver + etcd, the operator, a real PostgreSQL per
// instance pod (the production entrypoint, with pgBackRest's TLS server beside each), a backup pod
// run as its entrypoint would run in it (pgBackRest as the repository host, reaching the instances
// over TLS with the cluster's backup client certificate), and a real S3 server (versitygw over
// TLS). A backup from the standby by default and from the primary when asked, each recorded as
// pgBackRest lists it; then the refusals: no such cluster, no spec.backup, and a wrong secret key,
// whose failure names pgBackRest's error and no credential value.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '@homeostat/testing';
import { sharedKubeConfig } from '@homeostat/testing/shared';
import { builtin, findCondition, KubeClient } from '@homeostat/reconcile';
import { memoryLogger } from '@homeostat/reconcile/testing';
import { postgresBackups, type PostgresBackup } from '../../api/postgres-backup-types.ts';
import { defaultConnectOptions, withConnection } from '../../instance/instance.ts';
import {
  createBackup as create,
  finishedBackup,
  startBackupCluster,
  type BackupCluster,
} from '../../test-support/backup-cluster.ts';
import { PodProcesses } from '../../test-support/pod-processes.ts';
import { clusterReader, createCluster } from '../../test-support/pod-cluster.ts';

const kubeConfig = sharedKubeConfig();
const namespace = `pg-backup-${process.pid}`;
const cluster = 'ledger';
const bucket = 'pg-backups';
const prefix = 'clusters/ledger';
const client = new KubeClient(kubeConfig, { fieldManager: 'test-user' });
const { log, lines } = memoryLogger();
const { get, slow } = clusterReader(client, namespace, cluster, lines);

const createBackup = (name: string, spec: Record<string, unknown>) => create(client, namespace, name, spec);
const finished = (name: string): Promise<PostgresBackup> => finishedBackup(client, namespace, name, slow);

const eventsOf = async (name: string) =>
  (await client.list(builtin.events, { namespace })).items.filter((e) => e.regarding?.name === name);

describe('PostgreSQLBackup: real kube-apiserver, real PostgreSQL and pgBackRest servers, real S3', () => {
  const pods = new PodProcesses(client, namespace, cluster);
  let bed: BackupCluster;

  /** pgBackRest's manifest of a backup in the bucket (versitygw keeps objects as files). */
  const manifest = (label: string) =>
    readFileSync(join(bed.repository, 'backup', cluster, label, 'backup.manifest'), 'utf8');

  beforeAll(async () => {
    bed = await startBackupCluster({
      kubeConfig,
      client,
      namespace,
      cluster,
      bucket,
      prefix,
      log,
      pods,
      poll: slow,
    });
    const primary = (await get()).status?.currentPrimary ?? '';
    await withConnection(pods.endpoint(primary), pods.bed.superuser, defaultConnectOptions, async (c) => {
      await c.query('CREATE TABLE entries(id bigserial PRIMARY KEY, note text)');
      await c.query("INSERT INTO entries(note) SELECT 'row ' || g FROM generate_series(1, 1000) g");
    });
  }, 200_000);

  afterAll(async () => {
    await bed?.stop();
    client.close();
  });

  it('takes a full backup from the standby, records what pgBackRest lists, and removes its pod', async () => {
    await createBackup('nightly', { clusterName: cluster });
    const backup = await finished('nightly');
    expect(backup.status?.phase, JSON.stringify(backup.status?.conditions)).toBe('Succeeded');
    const status = backup.status ?? {};
    expect(status).toMatchObject({
      source: 'Standby',
      type: 'full',
      clusterUid: (await get()).metadata?.uid,
    });
    expect(status.label).toMatch(/^\d{8}-\d{6}F$/);
    expect(status.endLsn).toMatch(/^[0-9A-F]+\/[0-9A-F]+$/);
    expect(status.databaseBytes).toBeGreaterThan(1_000_000);
    expect(status.storedBytes).toBeGreaterThan(0);
    expect(status.endWal).toMatch(/^[0-9A-F]{24}$/);
    expect(findCondition(status.conditions, 'Complete')).toMatchObject({ status: 'True' });
    expect(findCondition(status.conditions, 'Failed')).toMatchObject({ status: 'False' });
    // In the bucket, and pgBackRest's own manifest says the files came from a standby.
    const text = manifest(status.label ?? '');
    expect(text).toContain('option-backup-standby=true');
    await waitUntil(
      'the backup pod deleted',
      async () =>
        (await client.list(builtin.pods, { namespace })).items.every(
          (p) => !p.metadata?.name?.startsWith('postgres-backup-'),
        ),
      slow,
    );
    await waitUntil(
      'BackupCompleted recorded',
      async () => (await eventsOf('nightly')).some((e) => e.reason === 'BackupCompleted'),
      slow,
    );
  }, 200_000);

  it('takes it from the primary when asked', async () => {
    await createBackup('from-primary', { clusterName: cluster, target: 'Primary' });
    const backup = await finished('from-primary');
    expect(backup.status?.phase, JSON.stringify(backup.status?.conditions)).toBe('Succeeded');
    expect(backup.status?.source).toBe('Primary');
    expect(manifest(backup.status?.label ?? '')).toContain('option-backup-standby=false');
  }, 200_000);

  it('refuses a backup of a cluster that does not exist, or that sets no spec.backup, saying why', async () => {
    await createBackup('nowhere', { clusterName: 'absent' });
    const missing = await finished('nowhere');
    expect(missing.status?.phase).toBe('Failed');
    expect(findCondition(missing.status?.conditions, 'Failed')).toMatchObject({
      status: 'True',
      reason: 'ClusterNotFound',
    });
    await createCluster(client, namespace, 'plain', { instances: 1 });
    await createBackup('unconfigured', { clusterName: 'plain' });
    const unconfigured = await finished('unconfigured');
    expect(findCondition(unconfigured.status?.conditions, 'Failed')).toMatchObject({
      status: 'True',
      reason: 'BackupNotConfigured',
    });
    expect(findCondition(unconfigured.status?.conditions, 'Failed')?.message).toContain('spec.backup');
  }, 60_000);

  it('a wrong secret key: Failed with pgBackRest error code, and no credential value anywhere', async () => {
    const { s3 } = bed;
    const wrongSecret = `wrong${s3.secretAccessKey.slice(5)}x`;
    await bed.s3Repository.setSecretKey(wrongSecret);
    try {
      await createBackup('refused', { clusterName: cluster });
      const backup = await finished('refused');
      expect(backup.status?.phase).toBe('Failed');
      const failed = findCondition(backup.status?.conditions, 'Failed');
      expect(failed).toMatchObject({ status: 'True', reason: 'BackupFailed' });
      expect(failed?.message).toMatch(/^backup failed: ERROR: \[\d+\]: /);
      await waitUntil(
        'the Warning recorded',
        async () => (await eventsOf('refused')).some((e) => e.type === 'Warning'),
        slow,
      );
      const everything = JSON.stringify([
        backup.status,
        (await client.list(builtin.events, { namespace })).items,
        lines,
        pods.bed.allLogs(),
      ]);
      for (const value of [s3.accessKeyId, s3.secretAccessKey, wrongSecret]) {
        expect(everything.includes(value), 'a credential value in status, Events or logs').toBe(false);
      }
    } finally {
      await bed.s3Repository.setSecretKey(s3.secretAccessKey);
    }
  }, 200_000);

  it('keeps its spec: a backup is taken once', async () => {
    await expect(
      client.patch(
        postgresBackups,
        'nightly',
        namespace,
        { spec: { target: 'Primary' } },
        { patchType: 'merge' },
      ),
    ).rejects.toThrow(/a backup is taken once/);
    await expect(createBackup('bad-target', { clusterName: cluster, target: 'Replica' })).rejects.toThrow(
      /PreferStandby/,
    );
    expect(existsSync(join(bed.repository, 'backup', cluster, 'backup.info'))).toBe(true);
  });
});
