// Runs against the cluster in KUBECONFIG: PostgreSQL backups and point-in-time recovery as a user
// meets them, with the operator installed from its Helm chart into a `restricted` namespace and
// the in-cluster S3 server (versitygw, harness/s3-server.ts) serving https with a private CA, since
// pgBackRest speaks S3 over https only. A two-instance PostgreSQLCluster archives its WAL there;
// rows are written one transaction each, stamped with clock_timestamp(); a PostgreSQLBackup is
// taken from the standby; more rows; a moment T read from the server's clock between two commits;
// more rows; the last WAL segment archived. Then two new clusters are made from that repository:
// one recovered to T holds exactly the rows committed up to T, one recovered to the end of the
// archive holds every acknowledged row; both take writes afterwards.
//
// The seconds the backup and each recovery took are printed, never asserted.
import { waitUntil } from '@homeostat/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apply, getObject, kubectl } from '../harness/cluster-access.ts';
import { operatorCharts } from '../harness/operator-charts.ts';
import { installOperator, type OperatorRelease } from '../harness/operator-release.ts';
import { queryOnce } from '../harness/postgres-client.ts';
import { PostgresClusterUnderTest, type PostgresClusterObject } from '../harness/postgres-cluster.ts';
import { deployS3Server, type ClusterS3Server } from '../harness/s3-server.ts';
import { createTestNamespace, type TestNamespace } from '../harness/test-namespace.ts';

const source = 'ledger';
const bucket = 'pg-backups';
const credentialsSecret = 'backup-s3';
const caSecret = 's3-ca';

interface BackupObject {
  status?: {
    phase?: string;
    source?: string;
    label?: string;
    startedAt?: string;
    finishedAt?: string;
    databaseBytes?: number;
    toolVersion?: string;
    conditions?: { type: string; status: string; reason: string; message: string }[];
  };
}

type ClusterWithBackup = PostgresClusterObject & {
  status?: PostgresClusterObject['status'] & { backup?: { lastArchivedWal?: string } };
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const secondsSince = (start: number) => ((Date.now() - start) / 1000).toFixed(1);

// Both images: each carries its Debian release's pgBackRest (17: trixie's 2.55, 18: forky's 2.60),
// and the backup pod and the recovery run whatever the cluster's image has.
describe.each([18, 17] as const)(
  'PostgreSQL %i: base backup and point-in-time recovery through the in-cluster S3 server over TLS',
  (major) => {
    let namespace: TestNamespace;
    let ns: string;
    let operator: OperatorRelease;
    let s3: ClusterS3Server;
    let destination: Record<string, unknown>;
    const figures: string[] = [];
    const clusters = new Map<string, PostgresClusterUnderTest>();
    const pgc = (name: string) => {
      const found = clusters.get(name) ?? new PostgresClusterUnderTest(ns, name);
      clusters.set(name, found);
      return found;
    };
    const figure = (line: string) => {
      figures.push(line);
      console.warn(`[postgres ${major} backup e2e] ${line}`);
    };

    /** Labels acknowledged by the source, in commit order, and whether each committed before T. */
    const acknowledged: { label: string; beforeTarget: boolean }[] = [];
    let target = '';
    let afterTarget = false;

    /** One row in its own transaction through the source's -rw Service, as the application writes. */
    const insert = async (label: string) => {
      await queryOnce(
        await pgc(source).readWriteTarget(),
        'INSERT INTO stamped (label, committed_at) VALUES ($1, clock_timestamp())',
        [label],
      );
      acknowledged.push({ label, beforeTarget: !afterTarget });
    };
    const labelsIn = async (cluster: string) =>
      (
        await queryOnce<{ label: string }>(
          await pgc(cluster).readWriteTarget(),
          'SELECT label FROM stamped ORDER BY id',
        )
      ).map((r) => r.label);

    /**
     * SQL as the operator's superuser in the primary's pod, over its Unix socket (what a user with
     * `superuserAccess` would do through -rw; here without changing the cluster for it). The
     * statement is an argument of the shell, never part of its script.
     */
    const superuserSql = async (cluster: string, sql: string) => {
      const primary = (await pgc(cluster).primaryPod()).metadata?.name ?? '';
      const script =
        'PGPASSWORD="$(cat /etc/homeostat/operator/password)" psql -h /var/run/postgresql -U "$(cat /etc/homeostat/operator/username)" -d postgres -qAtX -v ON_ERROR_STOP=1 -c "$1"';
      return (
        await kubectl(['-n', ns, 'exec', primary, '-c', 'postgres', '--', 'bash', '-c', script, 'sql', sql])
      ).trim();
    };

    const conditionOf = (cluster: PostgresClusterObject | undefined, type: string) =>
      cluster?.status?.conditions?.find((c) => c.type === type);

    /** A cluster of `instances` with the suite's small buffers and `extra` spec fields. */
    const clusterObject = (name: string, instances: number, extra: object) => ({
      apiVersion: 'postgres.homeostat.dev/v1alpha1',
      kind: 'PostgreSQLCluster',
      metadata: { name, namespace: ns },
      spec: {
        instances,
        postgresVersion: major,
        storage: { size: '1Gi' },
        postgresql: { parameters: { shared_buffers: '16MB', max_connections: '50' } },
        ...extra,
      },
    });

    /**
     * Waits until the -rw Service of `name` takes a connection. A new Service's ClusterIP refuses
     * connections until kube-proxy has its ready endpoint, which can be a moment after the pod is
     * Ready (seen: ECONNREFUSED right after Available); an application's pool retries the same way.
     */
    const rwAnswers = (name: string) =>
      waitUntil(
        `${name}-rw answers`,
        async () =>
          queryOnce(await pgc(name).readWriteTarget(), 'SELECT 1').then(
            () => true,
            () => false,
          ),
        { timeoutMs: 60_000, intervalMs: 500 },
      );

    /** Waits until `name` is Available (its primary takes writes) and every instance is ready. */
    const waitRecovered = async (name: string, instances: number) => {
      let last: PostgresClusterObject | undefined;
      await waitUntil(
        `${name} Available`,
        async () => {
          last = await pgc(name).get();
          return conditionOf(last, 'Available')?.status === 'True';
        },
        { timeoutMs: 600_000, intervalMs: 2000, describe: () => JSON.stringify(last?.status) },
      );
      await pgc(name).waitHealthy(instances, 'healthy after recovery');
      await rwAnswers(name);
    };

    beforeAll(async () => {
      namespace = await createTestNamespace(`e2e-postgres${major}-backup`);
      ns = namespace.name;
      s3 = await deployS3Server([bucket], { tls: true });
      await s3.credentialsSecret(ns, credentialsSecret);
      await s3.caSecret(ns, caSecret);
      destination = {
        s3: {
          bucket,
          prefix: `e2e/${source}`,
          endpoint: s3.endpoint,
          region: s3.region,
          forcePathStyle: true,
          credentialsSecretName: credentialsSecret,
          ca: { secretName: caSecret },
        },
      };
      operator = await installOperator(operatorCharts.postgres, ns);
    });

    afterAll(async () => {
      console.warn(`[postgres ${major} backup e2e] figures:\n  ${figures.join('\n  ')}`);
      await kubectl([
        '-n',
        ns,
        'delete',
        'postgresqlcluster',
        '--all',
        '--wait=true',
        '--timeout=120s',
      ]).catch(() => '');
      await operator?.cleanup();
      await namespace?.remove();
      await s3?.remove();
    });

    it('archives the WAL of a two-instance cluster to the S3 server over https: ContinuousArchiving True', async () => {
      await apply([clusterObject(source, 2, { backup: { destination } })]);
      await pgc(source).waitHealthy(2);
      await rwAnswers(source);
      let archiving: { status: string; message: string } | undefined;
      await waitUntil(
        'ContinuousArchiving True',
        async () => {
          archiving = conditionOf(await pgc(source).get(), 'ContinuousArchiving');
          return archiving?.status === 'True';
        },
        { timeoutMs: 180_000, intervalMs: 2000, describe: () => JSON.stringify(archiving) },
      );
      expect(s3.endpoint).toMatch(/^https:\/\//);
    });

    it('takes a base backup from the standby while rows are written before and after it', async () => {
      await queryOnce(
        await pgc(source).readWriteTarget(),
        'CREATE TABLE stamped (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, label text NOT NULL, committed_at timestamptz NOT NULL)',
      );
      for (let i = 1; i <= 5; i++) await insert(`before-backup-${i}`);

      const started = Date.now();
      await apply([
        {
          apiVersion: 'postgres.homeostat.dev/v1alpha1',
          kind: 'PostgreSQLBackup',
          metadata: { name: 'first', namespace: ns },
          spec: { clusterName: source },
        },
      ]);
      let backup: BackupObject | undefined;
      await waitUntil(
        'PostgreSQLBackup first finished',
        async () => {
          backup = await getObject<BackupObject>('postgresqlbackup', 'first', ns);
          return backup?.status?.phase === 'Succeeded' || backup?.status?.phase === 'Failed';
        },
        { timeoutMs: 300_000, intervalMs: 1000, describe: () => JSON.stringify(backup?.status) },
      );
      const status = backup?.status;
      expect(status?.phase, JSON.stringify(status?.conditions)).toBe('Succeeded');
      expect(status?.source).toBe('Standby');
      expect(status?.label).toMatch(/F$/);
      const took = (Date.parse(status?.finishedAt ?? '') - Date.parse(status?.startedAt ?? '')) / 1000;
      figure(
        `base backup ${status?.label} (pgBackRest ${status?.toolVersion}, ${status?.databaseBytes} bytes) from the standby: ${took.toFixed(1)} s by its status, Succeeded ${secondsSince(started)} s after it was created`,
      );

      // pgBackRest compares a time target with a backup's end to the second: the rows that T is
      // placed between are written at least 1.1 s after the backup ended.
      const finished = Date.parse(status?.finishedAt ?? '');
      await sleep(Math.max(0, finished + 1100 - Date.now()));
      for (let i = 1; i <= 3; i++) await insert(`after-backup-${i}`);
    });

    it('archives every row once a WAL switch closes the segment they are in', async () => {
      // T from the server's own clock, with a margin on both sides so the commits around it are
      // clearly on one side: the row before was acknowledged (committed), the next is not yet sent.
      await sleep(300);
      target = await superuserSql(
        source,
        `SELECT to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`,
      );
      afterTarget = true;
      await sleep(300);
      for (let i = 1; i <= 3; i++) await insert(`after-target-${i}`);

      const closed = await superuserSql(source, 'SELECT pg_walfile_name(pg_switch_wal())');
      expect(closed).toMatch(/^[0-9A-F]{24}$/);
      let last: ClusterWithBackup | undefined;
      await waitUntil(
        `WAL segment ${closed} archived`,
        async () => {
          last = (await pgc(source).get()) as ClusterWithBackup | undefined;
          return (last?.status?.backup?.lastArchivedWal ?? '') >= closed;
        },
        { timeoutMs: 120_000, intervalMs: 1000, describe: () => JSON.stringify(last?.status?.backup) },
      );
    });

    it('recovers a new two-instance cluster to T: exactly the rows committed up to T, and it takes a write', async () => {
      const name = `${source}-at-t`;
      const started = Date.now();
      await apply([
        clusterObject(name, 2, {
          bootstrap: {
            recovery: { source: { clusterName: source, destination }, target: { time: target } },
          },
        }),
      ]);
      await waitRecovered(name, 2);
      figure(
        `recovered to T (${target}) with 2 instances: Available and healthy after ${secondsSince(started)} s`,
      );

      const expected = acknowledged.filter((r) => r.beforeTarget).map((r) => r.label);
      expect(expected).toContain('after-backup-3');
      expect(await labelsIn(name)).toEqual(expected);
      // The stamps agree: every row there was stamped before T.
      const [latest] = await queryOnce<{ after: boolean }>(
        await pgc(name).readWriteTarget(),
        'SELECT max(committed_at) > $1::timestamptz AS after FROM stamped',
        [target],
      );
      expect(latest?.after).toBe(false);

      await queryOnce(
        await pgc(name).readWriteTarget(),
        "INSERT INTO stamped (label, committed_at) VALUES ('written-after-recovery', clock_timestamp())",
      );
      expect((await labelsIn(name)).at(-1)).toBe('written-after-recovery');
    }, 900_000);

    it('recovers a new cluster to the end of the archive: every acknowledged row, and it takes a write', async () => {
      const name = `${source}-at-end`;
      const started = Date.now();
      await apply([
        clusterObject(name, 1, { bootstrap: { recovery: { source: { clusterName: source, destination } } } }),
      ]);
      await waitRecovered(name, 1);
      figure(
        `recovered to the end of the archive with 1 instance: Available and healthy after ${secondsSince(started)} s`,
      );

      expect(await labelsIn(name)).toEqual(acknowledged.map((r) => r.label));
      await queryOnce(
        await pgc(name).readWriteTarget(),
        "INSERT INTO stamped (label, committed_at) VALUES ('written-after-recovery', clock_timestamp())",
      );
      expect((await labelsIn(name)).at(-1)).toBe('written-after-recovery');
    }, 900_000);
  },
);
