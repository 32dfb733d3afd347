// Runs against the cluster in KUBECONFIG: PostgreSQL backups and point-in-time recovery as a user
// meets them, with the operator installed from its Helm chart into a `restricted` namespace and
// the in-cluster S3 server (versitygw, harness/s3-server.ts) serving https with a private CA, since
// pgBackRest speaks S3 over https only. A two-instance PostgreSQLCluster archives its WAL there;
// rows are written one transaction each, stamped with clock_timestamp(); a PostgreSQLBackup is
// taken from the standby; more rows; a moment T read from the server's clock between two commits;
// more rows; the last WAL segment archived. Then two new clusters are made from that repository:
// one recovered to T holds exactly the rows committed up to T, one recovered to the end of the
// archive holds every acknowledged row; both take writes afterwards. Then the restore drills
// (spec.backup.verify, every minute): one passes, recording the backup's label, its pod and claim
// gone and the source untouched; with one archived WAL segment removed from the bucket between
// later ones, the next fails naming that segment.
//
// The seconds the backup and each recovery took are printed, never asserted.
import { waitUntil } from '@homeostat/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apply, getObject, kubectl, listObjects } from '../harness/cluster-access.ts';
import { operatorCharts } from '../harness/operator-charts.ts';
import { installOperator, type OperatorRelease } from '../harness/operator-release.ts';
import { kubectlHomeostat } from '../harness/kubectl-homeostat.ts';
import { queryOnce } from '../harness/postgres-client.ts';
import { PostgresClusterUnderTest, type PostgresClusterObject } from '../harness/postgres-cluster.ts';
import { deployS3Server, type ClusterS3Server } from '../harness/s3-server.ts';
import { createTestNamespace, type TestNamespace } from '../harness/test-namespace.ts';
import { setTimeout as sleep } from 'node:timers/promises';

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
    verification?: { result: string; drilledAt: string; restoreSeconds?: number; message?: string };
  };
}

type ClusterWithBackup = PostgresClusterObject & {
  status?: PostgresClusterObject['status'] & {
    backup?: { lastArchivedWal?: string };
    restoreDrill?: { startedAt?: string; pod?: string };
    lastVerifiedBackup?: {
      backup: string;
      restorePoint: string;
      verifiedAt: string;
      restoreSeconds: number;
      recoveryPointSeconds: number;
      replayedThrough?: string;
      databases?: { name: string; tables: number; rows: number }[];
      comparedWithSource?: { result: string; lsn?: string; standby?: string; reason?: string };
    };
  };
};

/** What marks a restore drill's pod and claim (its value: the cluster's name). */
const drillLabel = 'postgres.homeostat.dev/restore-drill';

const secondsSince = (start: number) => ((Date.now() - start) / 1000).toFixed(1);

// Both images: each carries its Debian release's pgBackRest (17: trixie's 2.55, 18: forky's 2.60),
// and the backup pod and the recovery run whatever the cluster's image has. The recovery to a time
// and the drills run on 18 only: what they add over a recovery to the end is the operator's own
// target and drill logic, the same on both images, and on 17 they would cost CI about two minutes.
describe.each([18, 17] as const)(
  'PostgreSQL %i: base backup and point-in-time recovery through the in-cluster S3 server over TLS',
  (major) => {
    const onNewestImageOnly = it.runIf(major === 18);
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
    // The base backup the standby test takes (its name is the cluster's and the time).
    let firstBackup = '';
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

    /** The source's spec as this suite applies it; `verify` turns its restore drills on. */
    const sourceObject = (verify?: { schedule: string }) =>
      clusterObject(source, 2, { backup: { destination, ...(verify ? { verify } : {}) } });

    /** Closes the current WAL segment and waits until it is archived; returns its name. */
    const switchAndArchive = async () => {
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
      return closed;
    };

    /** The source's drill pods and claims (by the label the operator puts on both). */
    const drillObjects = async () => [
      ...(await listObjects<{ metadata: { name: string } }>('pods', ns, `${drillLabel}=${source}`)),
      ...(await listObjects<{ metadata: { name: string } }>(
        'persistentvolumeclaims',
        ns,
        `${drillLabel}=${source}`,
      )),
    ];

    /**
     * Waits until BackupVerified has `status` from a drill that started after `after` (a drill
     * under way keeps the condition's status, with the reason DrillRunning), and returns the
     * source as it was then.
     */
    const waitVerified = async (status: 'True' | 'False', after: number) => {
      let last: ClusterWithBackup | undefined;
      await waitUntil(
        `BackupVerified ${status} after a drill`,
        async () => {
          last = (await pgc(source).get()) as ClusterWithBackup | undefined;
          const verified = conditionOf(last, 'BackupVerified');
          return (
            verified?.status === status &&
            verified.reason !== 'DrillRunning' &&
            Date.parse(last?.status?.restoreDrill?.startedAt ?? '') >= after
          );
        },
        {
          // The schedule runs at the next minute boundary, then the drill restores and checks.
          timeoutMs: 240_000,
          intervalMs: 2000,
          describe: () =>
            JSON.stringify({
              conditions: last?.status?.conditions?.filter((c) => c.type === 'BackupVerified'),
              restoreDrill: last?.status?.restoreDrill,
            }),
        },
      );
      return last;
    };

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
      // Taken as a user takes one on demand: `kubectl homeostat backup`, which names it after the
      // cluster and the time and waits until it Succeeded (it fails with the reason otherwise).
      const said = await kubectlHomeostat(['-n', ns, 'backup', source, '--wait', '--timeout', '300s']);
      firstBackup = /^PostgreSQLBackup (\S+) created$/m.exec(said)?.[1] ?? '';
      expect(said).toContain(`PostgreSQLBackup ${firstBackup} succeeded`);
      const backup = await getObject<BackupObject>('postgresqlbackup', firstBackup, ns);
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
      await switchAndArchive();
    });

    onNewestImageOnly(
      'recovers a new two-instance cluster to T: exactly the rows committed up to T, and it takes a write',
      async () => {
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
      },
      900_000,
    );

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

    onNewestImageOnly(
      'runs a restore drill on the schedule: BackupVerified True naming the backup, its pod and claim gone, the source untouched',
      async () => {
        const label =
          (await getObject<BackupObject>('postgresqlbackup', firstBackup, ns))?.status?.label ?? '';
        const primaryUid = (await pgc(source).primaryPod()).metadata?.uid;
        // The operator's clock is the real one: "every minute" runs the first drill at once (the
        // cluster is older than a minute) and each next one at a minute boundary.
        const started = Date.now();
        await apply([sourceObject({ schedule: '* * * * *' })]);
        const { status } = (await waitVerified('True', started - 1000)) ?? {};
        // Off again before anything else: drills every minute would race the checks below.
        await apply([sourceObject()]);
        const drill = status?.lastVerifiedBackup;
        figure(
          `restore drill passed ${secondsSince(started)} s after verify was set: restoreSeconds ${drill?.restoreSeconds}, recoveryPointSeconds ${drill?.recoveryPointSeconds}, replayed through ${drill?.replayedThrough}`,
        );
        expect(drill?.backup).toBe(label);
        // Recorded on the backup it restored too.
        expect(
          (await getObject<BackupObject>('postgresqlbackup', firstBackup, ns))?.status?.verification,
        ).toMatchObject({
          result: 'Verified',
        });
        expect(drill?.restoreSeconds).toBeGreaterThanOrEqual(0);
        expect(drill?.recoveryPointSeconds).toBeGreaterThanOrEqual(0);
        expect(drill?.replayedThrough).toMatch(/^[0-9A-F]{24}$/);
        // Two instances: the source was counted on its standby at L (past every commit acknowledged
        // before the drill), and the copy restored to L held the same tables and rows (ADR 0221).
        expect(drill?.comparedWithSource).toMatchObject({ result: 'Equal' });
        // So every row acknowledged before the drill came back: at least the suite's rows in `app`.
        const app = drill?.databases?.find((d) => d.name === 'app');
        expect(app?.rows).toBeGreaterThanOrEqual(acknowledged.length);
        expect(conditionOf(await pgc(source).get(), 'BackupVerified')).toMatchObject({
          status: 'True',
          reason: 'DrillSucceeded',
        });
        // The drill's pod and claim (`<cluster>-drill-<time>`) are deleted once it has answered.
        let left: string[] = [];
        await waitUntil(
          'the drill pod and claim gone',
          async () => {
            left = (await drillObjects()).map((o) => o.metadata.name);
            return left.length === 0;
          },
          { timeoutMs: 120_000, intervalMs: 1000, describe: () => left.join(', ') },
        );
        const events = await listObjects<{ reason: string; regarding?: { name: string } }>(
          'events.events.k8s.io',
          ns,
        );
        expect(events.filter((e) => e.regarding?.name === source).map((e) => e.reason)).toEqual(
          expect.arrayContaining(['RestoreDrillStarted', 'BackupVerified']),
        );
        // The source was not touched: the same primary pod, taking writes.
        expect((await pgc(source).primaryPod()).metadata?.uid).toBe(primaryUid);
        await insert('after-the-drill');
        expect((await labelsIn(source)).at(-1)).toBe('after-the-drill');
      },
      600_000,
    );

    onNewestImageOnly(
      'fails the next drill when an archived WAL segment is removed from the bucket, naming that segment',
      async () => {
        // Three segments archived after the last drill; the middle one is then lost from the bucket.
        // A row in each, so that each switch closes a segment of its own.
        await insert('before-the-lost-segment');
        const first = await switchAndArchive();
        await insert('in-the-lost-segment');
        const lost = await switchAndArchive();
        await insert('after-the-lost-segment');
        await switchAndArchive();
        expect(first < lost).toBe(true);
        // pgBackRest keeps segment S as <prefix>/archive/<stanza>/<major>-1/<S's first 16 hex>/S-<sha1>[.<compression>].
        const segmentPrefix = `e2e/${source}/archive/${source}/${major}-1/${lost.slice(0, 16)}/${lost}-`;
        const keys = await s3.objectKeys(bucket, segmentPrefix);
        expect(keys, segmentPrefix).toHaveLength(1);
        await s3.deleteObject(bucket, keys[0] ?? '');
        expect(await s3.objectKeys(bucket, segmentPrefix)).toEqual([]);

        const primaryUid = (await pgc(source).primaryPod()).metadata?.uid;
        const verifiedBefore = ((await pgc(source).get()) as ClusterWithBackup | undefined)?.status
          ?.lastVerifiedBackup;
        const started = Date.now();
        await apply([sourceObject({ schedule: '* * * * *' })]);
        try {
          const failed = await waitVerified('False', started - 1000);
          figure(`restore drill failed ${secondsSince(started)} s after verify was set again`);
          const verified = conditionOf(failed, 'BackupVerified');
          expect(verified?.reason).toBe('DrillFailed');
          expect(verified?.message).toContain(`segment ${lost} is missing or unreadable`);
          // A failed drill leaves the last one that passed on record.
          expect(failed?.status?.lastVerifiedBackup).toEqual(verifiedBefore);
        } finally {
          // No drill runs while the suite cleans up.
          await apply([sourceObject()]);
        }
        const events = await listObjects<{ reason: string; note?: string; regarding?: { name: string } }>(
          'events.events.k8s.io',
          ns,
        );
        expect(
          events.some(
            (e) =>
              e.regarding?.name === source &&
              e.reason === 'BackupVerificationFailed' &&
              (e.note ?? '').includes(lost),
          ),
        ).toBe(true);
        // The cluster itself is untouched: the same primary, taking writes.
        expect((await pgc(source).primaryPod()).metadata?.uid).toBe(primaryUid);
        await insert('after-the-failed-drill');
        expect((await labelsIn(source)).at(-1)).toBe('after-the-failed-drill');
      },
      600_000,
    );
  },
);
