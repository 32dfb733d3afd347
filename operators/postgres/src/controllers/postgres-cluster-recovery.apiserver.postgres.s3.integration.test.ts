// spec.bootstrap.recovery end to end: a real kube-apiserver + etcd, the operator, real PostgreSQL
// processes per pod (the production entrypoint), pgBackRest and a real S3 server (versitygw over
// TLS). A cluster archives and is backed up (a PostgreSQLBackup), rows are written on either side
// of a moment T; new clusters are then made from its repository: to T (exactly the rows committed
// before it), to the end of the archive (every row), and to a time before any backup (refused,
// and the status says why). A recovered cluster takes writes, its own Secrets' passwords work,
// and no recovery target is left in its settings.
import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '@homeostat/testing';
import { sharedKubeConfig } from '@homeostat/testing/shared';
import { builtin, findCondition, KubeClient, type Manager } from '@homeostat/reconcile';
import { memoryLogger } from '@homeostat/reconcile/testing';
import { postgresBackups, type PostgresBackup } from '../api/postgres-backup-types.ts';
import { postgresClusters } from '../api/postgres-cluster-types.ts';
import { defaultConnectOptions, withConnection, type Credentials } from '../instance/instance.ts';
import { PodProcesses } from '../test-support/pod-processes.ts';
import { startS3Repository, type S3Repository } from '../test-support/s3-repository.ts';
import { clusterReader, createCluster, podOperator, prepareNamespace } from '../test-support/pod-cluster.ts';
import { secretNames } from './cluster-names.ts';

const kubeConfig = sharedKubeConfig();
const namespace = `pg-recovery-${process.pid}`;
// A stanza name no other test file uses: pgBackRest's remote side locks /tmp/pgbackrest/<stanza>-backup.lock,
// and every test's instances share this machine's /tmp (each pod has its own).
const source = 'journal';
const bucket = 'pg-recovery';
const prefix = 'journal';
const client = new KubeClient(kubeConfig, { fieldManager: 'test-user' });
const { log, lines } = memoryLogger();
const sourceReader = clusterReader(client, namespace, source, lines);
const slow = sourceReader.slow;

describe('bootstrap.recovery: real kube-apiserver, real PostgreSQL and pgBackRest, real S3', () => {
  const pods = new Map<string, PodProcesses>();
  let manager: Manager;
  let repository: S3Repository;
  let destination: Record<string, unknown>;
  let target = '';

  const podsOf = (cluster: string) => {
    const found = pods.get(cluster) ?? new PodProcesses(client, namespace, cluster);
    pods.set(cluster, found);
    return found;
  };
  const sql = async <T extends Record<string, unknown>>(
    cluster: string,
    text: string,
    params: unknown[] = [],
  ) => {
    const processes = podsOf(cluster);
    const primary = (await client.get(postgresClusters, cluster, namespace)).status?.currentPrimary ?? '';
    return withConnection(
      processes.endpoint(primary),
      processes.bed.superuser,
      defaultConnectOptions,
      async (c: pg.Client) => (await c.query<T>(text, params)).rows,
    );
  };
  const labels = async (cluster: string) =>
    (await sql<{ label: string }>(cluster, 'SELECT label FROM marks ORDER BY id')).map((r) => r.label);
  const primaryOf = async (cluster: string) =>
    (await client.get(postgresClusters, cluster, namespace)).status?.currentPrimary;

  /** A new cluster made from the source's repository, started, and its primary's name once it has one. */
  /** Waits until `cluster` is Available; a failed wait shows its status and its entrypoint's log. */
  const available = async (cluster: string) => {
    const reader = clusterReader(client, namespace, cluster, lines);
    await waitUntil(
      `${cluster} available`,
      async () => findCondition((await reader.get()).status?.conditions, 'Available')?.status === 'True',
      {
        ...reader.slow,
        describe: () =>
          `${reader.slow.describe()}\n${podsOf(cluster).bed.entrypointLog(`${cluster}-0`).slice(-20).join('\n')}`,
      },
    );
  };
  const recover = async (cluster: string, recovery: Record<string, unknown>) => {
    await createCluster(client, namespace, cluster, {
      instances: 1,
      bootstrap: {
        recovery: { source: { clusterName: source, destination: { s3: destination } }, ...recovery },
      },
    });
    await podsOf(cluster).start();
  };

  beforeAll(async () => {
    await prepareNamespace(kubeConfig, client, namespace);
    repository = await startS3Repository(client, namespace, bucket);
    destination = repository.destination(prefix);
    // One operator for every cluster here, each reached where its own pods run.
    manager = podOperator(kubeConfig, namespace, log, podsOf(source), {
      instanceEndpoint: (cluster, instance) => podsOf(cluster.metadata?.name ?? '').endpoint(instance),
    });
    await manager.start();
    await createCluster(client, namespace, source, {
      instances: 1,
      backup: { destination: { s3: destination } },
    });
    await podsOf(source).start();
    await waitUntil('the source primary', async () => (await primaryOf(source)) !== undefined, slow);
    await sql(source, 'CREATE TABLE marks(id bigserial PRIMARY KEY, label text NOT NULL)');
    await sql(source, "INSERT INTO marks(label) VALUES ('before-backup')");
    await client.create(postgresBackups, {
      metadata: { name: 'base', namespace },
      spec: { clusterName: source },
    } as unknown as PostgresBackup);
    await waitUntil(
      'the base backup taken',
      async () => (await client.get(postgresBackups, 'base', namespace)).status?.phase === 'Succeeded',
      slow,
    );
    // pgBackRest compares a time target with a backup's end to the second: a target in the
    // second the backup ended would find no backup before it.
    await sleep(1100);
    await sql(source, "INSERT INTO marks(label) VALUES ('after-backup-1')");
    await sql(source, "INSERT INTO marks(label) VALUES ('after-backup-2')");
    await sleep(200);
    const [now] = await sql<{ now: Date }>(source, 'SELECT clock_timestamp() AS now');
    target = (now?.now ?? new Date()).toISOString();
    await sleep(200);
    await sql(source, "INSERT INTO marks(label) VALUES ('after-target-1')");
    await sql(source, "INSERT INTO marks(label) VALUES ('after-target-2')");
    const [closed] = await sql<{ walfile: string }>(
      source,
      'SELECT pg_walfile_name(pg_switch_wal()) AS walfile',
    );
    await waitUntil(
      'the last rows archived',
      async () =>
        ((await sourceReader.get()).status?.backup?.lastArchivedWal ?? '') >= (closed?.walfile ?? 'Z'),
      slow,
    );
  }, 300_000);

  afterAll(async () => {
    await manager?.stop();
    for (const processes of pods.values()) await processes.stop();
    await repository?.stop();
    client.close();
  });

  it("to a time: exactly the rows committed before it, a writable primary, this cluster's passwords", async () => {
    await recover('to-time', { target: { time: target } });
    await available('to-time');
    expect(await labels('to-time')).toEqual(['before-backup', 'after-backup-1', 'after-backup-2']);
    await sql('to-time', "INSERT INTO marks(label) VALUES ('written-after-recovery')");
    const [settings] = await sql<{ target: string; command: string }>(
      'to-time',
      "SELECT current_setting('recovery_target_time') AS target, current_setting('restore_command') AS command",
    );
    expect(settings).toEqual({ target: '', command: '' });
    // The application role logs in with this cluster's Secret, not the source's.
    const app = await client.get(builtin.secrets, secretNames('to-time').app, namespace);
    const field = (key: string) => Buffer.from(app.data?.[key] ?? '', 'base64').toString();
    const credentials: Credentials = { user: field('username'), password: field('password') };
    const primary = (await primaryOf('to-time')) ?? '';
    const rows = await withConnection(
      podsOf('to-time').endpoint(primary),
      credentials,
      defaultConnectOptions,
      async (c) => (await c.query<{ who: string }>('SELECT current_user AS who')).rows,
    );
    expect(rows).toEqual([{ who: credentials.user }]);
    expect(await sql('to-time', "SELECT datname FROM pg_database WHERE datname = 'app'")).toEqual([
      { datname: 'app' },
    ]);
  }, 300_000);

  it('to the end of the archive: every archived commit', async () => {
    await recover('to-end', {});
    await available('to-end');
    expect(await labels('to-end')).toEqual([
      'before-backup',
      'after-backup-1',
      'after-backup-2',
      'after-target-1',
      'after-target-2',
    ]);
  }, 300_000);

  it('to a time before any backup: refused, and the status says why', async () => {
    await recover('too-early', { target: { time: '2001-01-01T00:00:00Z' } });
    const reader = clusterReader(client, namespace, 'too-early', lines);
    await waitUntil(
      'Degraded naming the cause',
      async () =>
        findCondition((await reader.get()).status?.conditions, 'Degraded')?.message?.includes(
          'unable to find backup set',
        ) === true,
      reader.slow,
    );
    const message = findCondition((await reader.get()).status?.conditions, 'Degraded')?.message ?? '';
    expect(message).toContain(`recovery from ${source} failed`);
    expect(message).not.toContain(repository.s3.secretAccessKey);
  }, 300_000);

  it('to a time past the end of the archive: refused, and the status says why', async () => {
    const tomorrow = new Date(Date.now() + 24 * 3600_000).toISOString();
    await recover('too-late', { target: { time: tomorrow } });
    const reader = clusterReader(client, namespace, 'too-late', lines);
    await waitUntil(
      'Degraded naming the cause',
      async () =>
        findCondition((await reader.get()).status?.conditions, 'Degraded')?.message?.includes(
          'recovery ended before configured recovery target was reached',
        ) === true,
      reader.slow,
    );
    expect(findCondition((await reader.get()).status?.conditions, 'Available')?.status).not.toBe('True');
  }, 300_000);

  it('refuses at the API server a recovery that would archive into its own source, or two targets', async () => {
    await expect(
      createCluster(client, namespace, 'selfie', {
        instances: 1,
        backup: { destination: { s3: destination } },
        bootstrap: { recovery: { source: { clusterName: 'selfie', destination: { s3: destination } } } },
      }),
    ).rejects.toThrow(/would archive into its source/);
    await expect(
      createCluster(client, namespace, 'two-targets', {
        instances: 1,
        bootstrap: {
          recovery: {
            source: { clusterName: source, destination: { s3: destination } },
            target: { time: target, lsn: '0/3000000' },
          },
        },
      }),
    ).rejects.toThrow(/exactly one of time, lsn or restorePoint/);
  });
});
