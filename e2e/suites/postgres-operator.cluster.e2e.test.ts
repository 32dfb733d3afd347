// Runs against the cluster in KUBECONFIG: the PostgreSQL operator installed from its Helm chart into
// a namespace that enforces the `restricted` Pod Security Standard, and a three-instance
// PostgreSQLCluster with synchronous replication `required` taken through what a production
// database meets: the app Secret's URI through `-rw`, reads through `-ro`; under a steady write
// load through `-rw` (the suite's own client, recording every acknowledged row) the primary's pod
// force-deleted, its postgres killed with SIGKILL, its network cut (never two instances accepting
// writes), the operator killed in the middle of a failover; a replica and then the primary fenced on
// request and unfenced (their pods kept, no restart loop, no failover); a switchover to a named replica;
// scaling 3 → 5 → 2; a rolling restart for a parameter that needs one; deletion. Each failover
// prints the seconds until writes were accepted again (the budget is 5 s) and the acknowledged
// rows missing (none in `required` mode); the seconds are printed, never asserted.
//
// The write load runs where the suite runs and connects to the -rw Service's ClusterIP: on the
// local cluster this machine is the node; `npm run e2e -- --cluster kind` routes the kind
// cluster's Service range here (e2e/kind/service-route.ts). The SIGKILL and the network cut run on
// the pod's node (`/proc`, `nsenter`; inside the node's container on kind, harness/pod-processes.ts).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitUntil } from '@homeostat/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apply, getObject, kubectl, listObjects } from '../harness/cluster-access.ts';
import { operatorCharts } from '../harness/operator-charts.ts';
import { installOperator, type OperatorRelease } from '../harness/operator-release.ts';
import { cutPodNetwork, killOnNode, podOnNode, postmasterOf } from '../harness/pod-processes.ts';
import {
  ackedTable,
  longestWritePauseSeconds,
  missingRows,
  overlappingWriters,
  pollRoleInPod,
  queryOnce,
  startWriteLoad,
  waitForWritesAfterFault,
  writeOutageSeconds,
  type RoleSample,
  type WriteLoad,
} from '../harness/postgres-client.ts';
import { PostgresClusterUnderTest, requiredSyncCluster } from '../harness/postgres-cluster.ts';
import { createTestNamespace, type TestNamespace } from '../harness/test-namespace.ts';
import { runClientPod } from '../harness/workloads.ts';
import { kubectlHomeostat } from '../harness/kubectl-homeostat.ts';
import { credentialsIn, readBundle } from '../harness/support-bundle.ts';
import { operandImages } from '../images/image-names.ts';

const clusterName = 'orders';
const instanceSelector = `postgres.homeostat.dev/cluster=${clusterName}`;
const budgetSeconds = 5;
/** uid of the `postgres` user in the PostgreSQL images. */
const postgresUid = 999;

describe('PostgreSQL operator from its Helm chart, on the cluster in KUBECONFIG', () => {
  let namespace: TestNamespace;
  let ns: string;
  let operator: OperatorRelease;
  const figures: string[] = [];

  let pgc: PostgresClusterUnderTest;
  const cluster = () => pgc.get();
  const waitHealthy = (instances: number, what?: string) => pgc.waitHealthy(instances, what);
  const readWriteTarget = () => pgc.readWriteTarget();
  const primaryPod = () => pgc.primaryPod();
  /** A JSON merge patch of the cluster's spec, as a user would `kubectl patch` it. */
  const patchSpec = (spec: object) =>
    kubectl([
      '-n',
      ns,
      'patch',
      'postgresqlcluster',
      clusterName,
      '--type=merge',
      '-p',
      JSON.stringify({ spec }),
    ]);

  /** Polls pg_is_in_recovery() in every instance pod there is, including pods created later. */
  const pollEveryInstance = () => pgc.watchRoles();

  /**
   * Prints the operator's log of each step of the failovers and switchovers since `since` (the
   * engine's `step` events): where the seconds of an operation went.
   */
  async function printOperationSteps(label: string, since: number): Promise<void> {
    const seconds = Math.ceil((Date.now() - since) / 1000) + 5;
    const out = await kubectl([
      '-n',
      ns,
      'logs',
      `deployment/${operator.release}`,
      `--since=${seconds}s`,
    ]).catch((error: unknown) => `(no operator log: ${String(error)})`);
    const steps = out.split('\n').flatMap((line) => {
      try {
        const entry = JSON.parse(line) as {
          engineEvent?: string;
          rollout?: string;
          msg?: string;
          time?: number | string;
        };
        return entry.engineEvent !== undefined || entry.rollout !== undefined
          ? [`${new Date(entry.time ?? 0).toISOString().slice(11, 23)} ${entry.msg ?? ''}`]
          : [];
      } catch {
        return [];
      }
    });
    const read = steps.length
      ? ''
      : ` (none in the ${out.split('\n').length} lines read: ${out.slice(0, 300)})`;
    console.warn(`[postgres e2e] ${label}, the operator's steps${read}:\n  ${steps.join('\n  ')}`);
  }

  let nextId = 1;
  /**
   * Runs `fault` under a write load through -rw and waits until writes are accepted again and
   * the cluster is healthy; prints the seconds and the acknowledged rows missing.
   */
  async function underWriteLoad(
    label: string,
    fault: () => Promise<void>,
    settle: () => Promise<unknown> = () => waitHealthy(3, `healthy after ${label}`),
  ): Promise<{ outage: number | undefined; missing: number[]; load: WriteLoad }> {
    const target = await readWriteTarget();
    const load = startWriteLoad(target, nextId);
    await waitUntil(`writes acknowledged before ${label}`, async () => load.acked.length >= 20, {
      timeoutMs: 60_000,
      intervalMs: 100,
    });
    const started = Date.now();
    await fault();
    await waitForWritesAfterFault(load, started);
    await settle();
    const settled = Date.now();
    await waitUntil(
      `writes accepted after ${label}`,
      async () => writeOutageSeconds(load, started, settled) !== undefined,
      { timeoutMs: 120_000, intervalMs: 100 },
    );
    const outage = writeOutageSeconds(load, started, settled);
    const pause = longestWritePauseSeconds(load, started, settled);
    await load.stop();
    nextId = (load.acked.at(-1)?.id ?? nextId) + 1000;
    const missing = missingRows(load, await pgc.presentRows());
    const line = `${label}: writes accepted again after ${outage?.toFixed(2)} s (budget ${budgetSeconds} s), longest pause ${pause.toFixed(2)} s; ${load.acked.length} rows acknowledged, ${missing.length} missing`;
    figures.push(line);
    console.warn(`[postgres e2e] ${line}`);
    await printOperationSteps(label, started);
    return { outage, missing, load };
  }

  beforeAll(async () => {
    namespace = await createTestNamespace('e2e-postgres-operator');
    ns = namespace.name;
    pgc = new PostgresClusterUnderTest(ns, clusterName);
    operator = await installOperator(operatorCharts.postgres, ns);
  });

  afterAll(async () => {
    console.warn(`[postgres e2e] figures:\n  ${figures.join('\n  ')}`);
    await kubectl(['-n', ns, 'delete', 'postgresqlcluster', '--all', '--wait=true', '--timeout=120s']).catch(
      () => '',
    );
    await operator?.cleanup();
    await namespace?.remove();
  });

  it('passes `helm test`: the operator answers, reconciles the resource the test creates, and the test cleans up', async () => {
    await operator.passesHelmTest('postgresqlclusters');
  });

  it('refuses a parameter the operator owns at the API server, naming it', async () => {
    const invalid = {
      apiVersion: 'postgres.homeostat.dev/v1alpha1',
      kind: 'PostgreSQLCluster',
      metadata: { name: 'invalid', namespace: ns },
      spec: { postgresql: { parameters: { wal_level: 'minimal' } } },
    };
    await expect(apply([invalid])).rejects.toThrow(
      /postgresql\.parameters may not set wal_level: the operator owns it/,
    );
  });

  it('runs three instances: one primary, two streaming replicas, every pod restricted and Ready', async () => {
    await apply([requiredSyncCluster(ns, clusterName)]);
    const status = (await waitHealthy(3)).status;
    expect(status?.currentPrimary).toBe(`${clusterName}-0`);
    expect(status?.instanceStatuses?.map((i) => i.role).sort()).toEqual(['primary', 'replica', 'replica']);
    const labels = (await getObject<{ metadata: { labels: Record<string, string> } }>('namespace', ns))
      ?.metadata.labels;
    expect(labels?.['pod-security.kubernetes.io/enforce']).toBe('restricted');
  });

  it("connects with the app Secret's uri (verify-full) through -rw, and reads through -ro from a replica", async () => {
    const script = [
      'set -eu',
      'psql "$URI" -qAtX -v ON_ERROR_STOP=1 -c "CREATE TABLE greeting (word text)" -c "INSERT INTO greeting VALUES (\'hello\')"',
      'echo "rw: $(psql "$URI" -qAtX -c "SELECT pg_is_in_recovery()")"',
      // The replicas replay the row within moments; the read retries briefly.
      'for i in $(seq 1 20); do w="$(psql "$RO_URI" -qAtX -c "SELECT word FROM greeting" 2>/dev/null || true)"; [ "$w" = hello ] && break; sleep 0.5; done',
      'echo "ro: $(psql "$RO_URI" -qAtX -c "SELECT pg_is_in_recovery()") $w"',
    ].join('\n');
    const result = await runClientPod({
      namespace: ns,
      name: 'psql-client',
      image: operandImages.postgres18,
      runAsUser: postgresUid,
      command: ['bash', '-c', script],
      // The uri asks for verify-full; libpq finds the CA where the application mounts it.
      secret: { name: `${clusterName}-app`, mountPath: '/etc/app' },
      env: [
        { name: 'URI', valueFrom: { secretKeyRef: { name: `${clusterName}-app`, key: 'uri' } } },
        { name: 'PGSSLROOTCERT', value: '/etc/app/ca.crt' },
        { name: 'PGPASSWORD', valueFrom: { secretKeyRef: { name: `${clusterName}-app`, key: 'password' } } },
        {
          name: 'RO_URI',
          value: `postgresql://orders@${clusterName}-ro.${ns}.svc:5432/orders?sslmode=verify-full`,
        },
      ],
    });
    expect(result.logs.trim().split('\n'), `client pod ${result.phase}`).toEqual(['rw: f', 'ro: t hello']);
    expect(result.phase).toBe('Succeeded');
    await queryOnce(await readWriteTarget(), ackedTable);
  });

  it('kubectl homeostat: the cluster at a glance, psql as the application, a support bundle holding no credential', async () => {
    const status = await kubectlHomeostat(['-n', ns, 'status', `pgc/${clusterName}`]);
    expect(status).toMatch(new RegExp(`^${clusterName} \\(PostgreSQLCluster, namespace ${ns}\\): Healthy\n`));
    expect(status).toMatch(/Instance statuses:\n {2}NAME .*ROLE/);
    expect(status).toMatch(/\n {2}Available +True /);
    // The row the previous test wrote, read as the application through -rw with verify-full.
    const rows = await kubectlHomeostat([
      '-n',
      ns,
      'psql',
      clusterName,
      '--',
      '-qAtX',
      '-c',
      'SELECT word FROM greeting',
    ]);
    expect(rows.trim()).toBe('hello');

    const directory = mkdtempSync(join(tmpdir(), 'report-'));
    const path = join(directory, 'bundle.tar.gz');
    try {
      expect(await kubectlHomeostat(['-n', ns, 'report', `pgc/${clusterName}`, '-o', path])).toContain(
        `wrote ${path}`,
      );
      const bundle = readBundle(path);
      const root = bundle.files[0]?.split('/')[0] ?? '';
      expect(bundle.files).toEqual(
        expect.arrayContaining([
          `${root}/postgresqlcluster.json`,
          `${root}/objects.json`,
          `${root}/events.json`,
          `${root}/logs/${clusterName}-0/postgres.log`,
        ]),
      );
      expect(bundle.files.some((f) => f.startsWith(`${root}/operators/`) && f.endsWith('.log'))).toBe(true);
      const leaked = (await credentialsIn(ns)).filter(({ value }) => bundle.text.includes(value));
      expect(leaked.map(({ where }) => where)).toEqual([]);
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });

  it('kubectl homeostat fence/unfence: PostgreSQL stopped in a replica and then the primary, their pods kept with no restart loop and no failover; unfenced, the same primary takes writes', async () => {
    interface Pod {
      metadata?: { uid?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
      status?: {
        podIP?: string;
        containerStatuses?: {
          name: string;
          restartCount: number;
          started?: boolean;
          state?: { running?: object };
        }[];
      };
    }
    const pod = async (name: string) => (await getObject<Pod>('pod', name, ns)) ?? {};
    const postgresContainer = async (name: string) =>
      (await pod(name)).status?.containerStatuses?.find((c) => c.name === 'postgres');
    const before = (await waitHealthy(3, 'healthy before fencing')).status;
    const primary = before?.currentPrimary ?? '';
    const replica = before?.instanceStatuses?.find((i) => i.role === 'replica')?.name ?? '';
    const uids = {
      [primary]: (await pod(primary)).metadata?.uid,
      [replica]: (await pod(replica)).metadata?.uid,
    };
    const restartsBefore = {
      [primary]: (await postgresContainer(primary))?.restartCount ?? 0,
      [replica]: (await postgresContainer(replica))?.restartCount ?? 0,
    };

    const fencedReplica = await kubectlHomeostat([
      '-n',
      ns,
      'fence',
      clusterName,
      replica,
      '--timeout',
      '120s',
    ]);
    expect(fencedReplica).toContain(`${replica} fenced`);
    const fencedPod = await pod(replica);
    expect(fencedPod.metadata?.uid).toBe(uids[replica]);
    expect(fencedPod.metadata?.labels?.['postgres.homeostat.dev/role']).toBeUndefined();
    // No Service sends reads to it: the read-only Service's endpoints are the other replica only.
    const readOnlyAddresses = async () =>
      (
        await listObjects<{ endpoints?: { addresses?: string[] }[] }>(
          'endpointslices',
          ns,
          `kubernetes.io/service-name=${clusterName}-ro`,
        )
      ).flatMap((slice) => (slice.endpoints ?? []).flatMap((e) => e.addresses ?? []));
    // Endpoints follow readiness a moment after the pod's Ready condition, which the plugin waited for.
    await waitUntil(
      `${replica} gone from ${clusterName}-ro's endpoints`,
      async () => !(await readOnlyAddresses()).includes(fencedPod.status?.podIP ?? ''),
      { timeoutMs: 30_000, intervalMs: 500 },
    );

    await kubectlHomeostat(['-n', ns, 'fence', clusterName, primary, '--timeout', '120s']);
    await waitUntil(
      'Available False, PrimaryFenced',
      async () =>
        (await cluster())?.status?.conditions?.find((c) => c.type === 'Available')?.reason ===
        'PrimaryFenced',
      { timeoutMs: 30_000, intervalMs: 500 },
    );
    // The fence ends each one's PostgreSQL, the container's main process: one restart, into the
    // entrypoint's wait, which the startup probe lets through.
    for (const name of [primary, replica]) {
      await waitUntil(
        `${name}'s container restarted once into its fenced wait`,
        async () => {
          const container = await postgresContainer(name);
          return (
            container?.restartCount === (restartsBefore[name] ?? 0) + 1 &&
            container.started === true &&
            container.state?.running !== undefined
          );
        },
        { timeoutMs: 90_000, intervalMs: 1000 },
      );
    }
    // Past three liveness periods (10 s each) and many times failoverDelay: the kubelet restarts
    // no fenced container again, and nothing fails over.
    await new Promise((resolve) => setTimeout(resolve, 35_000));
    for (const name of [primary, replica]) {
      expect((await pod(name)).metadata?.uid).toBe(uids[name]);
      expect((await postgresContainer(name))?.restartCount, `${name} restarted while fenced`).toBe(
        (restartsBefore[name] ?? 0) + 1,
      );
    }
    const held = (await cluster())?.status;
    expect(held?.currentPrimary).toBe(primary);
    expect(held?.failovers).toBe(before?.failovers);
    const status = await kubectlHomeostat(['-n', ns, 'status', `pgc/${clusterName}`]);
    expect(status).toMatch(/FENCED/);

    const unfenced = await kubectlHomeostat(['-n', ns, 'unfence', clusterName, '--all', '--timeout', '180s']);
    expect(unfenced).toContain(primary);
    const after = (await waitHealthy(3, 'healthy after unfencing')).status;
    expect(after?.currentPrimary).toBe(primary);
    expect(after?.failovers).toBe(before?.failovers);
    // Through -rw as an application writes: its endpoints follow the pod's readiness, a probe
    // period behind the status the operator writes from its own probes.
    await waitUntil(
      'the same primary takes writes through -rw',
      async () => {
        const rows = await queryOnce<{ r: boolean }>(
          await readWriteTarget(),
          'SELECT pg_is_in_recovery() AS r',
        ).catch(() => []);
        return rows[0]?.r === false;
      },
      { timeoutMs: 30_000, intervalMs: 500 },
    );
  });

  it('fails over when the primary pod is force-deleted, losing no acknowledged write', async () => {
    const before = (await cluster())?.status;
    const old = await primaryPod();
    const { missing } = await underWriteLoad('primary pod force-deleted', async () => {
      await kubectl(['-n', ns, 'delete', 'pod', old.metadata?.name ?? '', '--grace-period=0', '--force']);
    });
    expect(missing).toEqual([]);
    const after = (await cluster())?.status;
    expect(after?.timeline).toBeGreaterThan(before?.timeline ?? 0);
  });

  it('fails over when the primary postgres is killed with SIGKILL, losing no acknowledged write', async () => {
    const old = await primaryPod();
    const postmaster = await postmasterOf(podOnNode(old));
    expect(postmaster, `the primary's postgres process on node ${old.spec?.nodeName}`).toBeDefined();
    const { missing } = await underWriteLoad('primary postgres SIGKILL', async () => {
      if (postmaster) await killOnNode(podOnNode(old), postmaster);
    });
    expect(missing).toEqual([]);
  });

  it('cut off the network, the primary is replaced and never two instances accept writes; it rejoins', async () => {
    const old = await primaryPod();
    const oldName = old.metadata?.name ?? '';
    const roles = pollEveryInstance();
    await waitUntil(
      'every instance polled',
      async () => new Set(roles.samples.map((s) => s.instance)).size === 3,
      {
        timeoutMs: 60_000,
        intervalMs: 200,
      },
    );
    let restore: (() => Promise<void>) | undefined;
    try {
      const { missing } = await underWriteLoad(
        'primary network cut',
        async () => {
          restore = await cutPodNetwork(podOnNode(old));
        },
        async () => {
          await waitUntil(
            'another primary',
            async () => (await cluster())?.status?.currentPrimary !== oldName,
            {
              timeoutMs: 120_000,
              intervalMs: 500,
            },
          );
          await restore?.();
          restore = undefined;
          await waitHealthy(3, 'healthy after the cut ended');
        },
      );
      expect(missing).toEqual([]);
    } finally {
      await restore?.();
      await roles.stop();
    }
    const writers = overlappingWriters(roles.samples, 1000);
    expect(writers, 'moments where two instances accepted writes').toEqual([]);
    const status = (await cluster())?.status;
    expect(status?.instanceStatuses?.find((i) => i.name === oldName)).toMatchObject({
      role: 'replica',
      ready: true,
    });
  });

  it('a primary cut off from everything, with no operator to fence it, stops taking writes on its own', async () => {
    const before = (await cluster())?.status;
    const old = await primaryPod();
    const oldName = old.metadata?.name ?? '';
    // Nothing fails over or deletes the pod while the operator is away: only the pod itself can stop it.
    await kubectl(['-n', ns, 'scale', `deployment/${operator.release}`, '--replicas=0']);
    await waitUntil(
      'operator gone',
      async () =>
        (await listObjects('pods', ns, `app.kubernetes.io/instance=${operator.release}`)).length === 0,
      {
        timeoutMs: 120_000,
        intervalMs: 500,
      },
    );
    const samples: RoleSample[] = [];
    const poll = pollRoleInPod(ns, oldName, (s) => samples.push(s));
    let restore: (() => Promise<void>) | undefined;
    let stoppedAfter: number | undefined;
    try {
      await waitUntil('the primary answers in its pod', async () => samples.some((s) => !s.inRecovery), {
        timeoutMs: 60_000,
        intervalMs: 200,
      });
      const cutAt = Date.now();
      restore = await cutPodNetwork(podOnNode(old));
      // Stopped: no "accepts writes" answer from inside the pod any more.
      await waitUntil(
        'the cut-off primary stopped',
        async () => {
          const last = samples.filter((s) => !s.inRecovery).at(-1);
          return last !== undefined && Date.now() - last.at > 3000;
        },
        { timeoutMs: 60_000, intervalMs: 500 },
      );
      stoppedAfter = ((samples.filter((s) => !s.inRecovery).at(-1)?.at ?? cutAt) - cutAt) / 1000;
      console.warn(
        `[postgres e2e] a cut-off primary stopped taking writes ${stoppedAfter.toFixed(1)} s after the cut`,
      );
      figures.push(`self-fence: the cut-off primary stopped ${stoppedAfter.toFixed(1)} s after the cut`);
      // Nothing answers on its socket: postgres is stopped, not just unobserved.
      await expect(
        kubectl([
          '-n',
          ns,
          'exec',
          oldName,
          '-c',
          'postgres',
          '--',
          'pg_isready',
          '-h',
          '/var/run/postgresql',
        ]),
      ).rejects.toThrow();
    } finally {
      await restore?.();
      poll.stop();
      await kubectl(['-n', ns, 'scale', `deployment/${operator.release}`, '--replicas=1']);
    }
    // Once the cut ends and the operator is back, the cluster heals either way: the old primary
    // resumed (no failover counted), or the operator found it still stopped and failed over once.
    // Which one depends on whether the primary restarts before the operator looks (seen both ways).
    const after = (await waitHealthy(3, 'healthy once the cut ended')).status;
    const failoversCounted = (after?.failovers ?? 0) - (before?.failovers ?? 0);
    expect({ primary: after?.currentPrimary, failoversCounted }).toEqual(
      after?.currentPrimary === oldName
        ? { primary: oldName, failoversCounted: 0 }
        : { primary: expect.any(String), failoversCounted: 1 },
    );
  });

  it('killed in the middle of a failover, the operator finishes it once after its restart', async () => {
    const before = (await cluster())?.status;
    const old = await primaryPod();
    let restore: (() => Promise<void>) | undefined;
    let caught: string | undefined;
    try {
      restore = await cutPodNetwork(podOnNode(old));
      await waitUntil(
        'a failover in progress',
        async () => {
          const op = (await cluster())?.status?.operation;
          if (op) caught = `${op.kind} at ${op.step}`;
          return op !== undefined;
        },
        { timeoutMs: 60_000, intervalMs: 100 },
      );
      await kubectl([
        '-n',
        ns,
        'delete',
        'pod',
        '-l',
        `app.kubernetes.io/instance=${operator.release}`,
        '--grace-period=0',
        '--force',
      ]);
      console.warn(`[postgres e2e] operator killed during the ${caught}`);
      await waitUntil(
        'another primary',
        async () => (await cluster())?.status?.currentPrimary !== old.metadata?.name,
        {
          timeoutMs: 180_000,
          intervalMs: 500,
        },
      );
    } finally {
      await restore?.();
    }
    const after = (await waitHealthy(3, 'healthy after the operator restart')).status;
    expect(after?.failovers).toBe((before?.failovers ?? 0) + 1);
    // Each promotion starts a new timeline: exactly one happened.
    expect(after?.timeline).toBe((before?.timeline ?? 0) + 1);
  });

  it('switches over to a named replica, losing no acknowledged write', async () => {
    const before = (await cluster())?.status;
    const target = before?.instanceStatuses?.find((i) => i.role === 'replica')?.name ?? '';
    const { missing } = await underWriteLoad(
      `switchover to ${target}`,
      async () => {
        // As a user does it: the plugin sets spec.primary and waits until the target takes writes.
        const said = await kubectlHomeostat(['-n', ns, 'promote', clusterName, target, '--timeout', '180s']);
        expect(said).toContain(`${target} is the primary of ${clusterName}`);
      },
      async () => {
        expect((await cluster())?.status?.currentPrimary).toBe(target);
        await waitHealthy(3, `healthy after the switchover to ${target}`);
      },
    );
    expect(missing).toEqual([]);
    const after = (await cluster())?.status;
    expect(after?.currentPrimary).toBe(target);
    expect(after?.switchovers).toBe((before?.switchovers ?? 0) + 1);
    // Unset: failovers stand from now on, and scaling down may move the primary.
    await patchSpec({ primary: null });
  });

  it('scales 3 → 5 → 2, the claims of removed instances deleted with them', async () => {
    await kubectl(['-n', ns, 'scale', `postgresqlcluster/${clusterName}`, '--replicas=5']);
    await waitHealthy(5);
    await kubectl(['-n', ns, 'scale', `postgresqlcluster/${clusterName}`, '--replicas=2']);
    const status = (await waitHealthy(2)).status;
    expect(status?.instanceStatuses?.map((i) => i.name).sort()).toEqual([
      `${clusterName}-0`,
      `${clusterName}-1`,
    ]);
    const claims = await listObjects('persistentvolumeclaims', ns, instanceSelector);
    expect(claims.length).toBe(2);
  });

  it('rolls a restart for a parameter that needs one: replicas first, then a switchover, then the old primary', async () => {
    const before = (await cluster())?.status;
    const { missing } = await underWriteLoad(
      'rolling restart',
      async () => {
        await patchSpec({ postgresql: { parameters: { shared_buffers: '24MB' } } });
      },
      async () => {
        await waitUntil(
          'every instance restarted with shared_buffers 24MB',
          async () => {
            const cluster = await waitHealthy(2);
            const progressing = cluster.status?.conditions?.find((c) => c.type === 'Progressing');
            if (progressing?.status !== 'False') return false;
            const target = await readWriteTarget();
            const rows = await queryOnce<{ shared_buffers: string }>(target, 'SHOW shared_buffers');
            return rows[0]?.shared_buffers === '24MB';
          },
          { timeoutMs: 300_000, intervalMs: 2000 },
        );
      },
    );
    expect(missing).toEqual([]);
    const after = (await cluster())?.status;
    expect(after?.switchovers).toBe((before?.switchovers ?? 0) + 1);
    expect(after?.currentPrimary).not.toBe(before?.currentPrimary);
  });

  it('deleted, it leaves nothing behind: pods, claims, Services and Secrets go with it', async () => {
    await kubectl(['-n', ns, 'delete', 'postgresqlcluster', clusterName, '--wait=true', '--timeout=120s']);
    let left: string[] = [];
    await waitUntil(
      `everything of ${ns}/${clusterName} garbage-collected`,
      async () => {
        left = [];
        for (const resource of [
          'pods',
          'persistentvolumeclaims',
          'services',
          'secrets',
          'poddisruptionbudgets',
        ])
          left.push(
            ...(await listObjects<{ metadata: { name: string } }>(resource, ns, instanceSelector)).map(
              (o) => `${resource}/${o.metadata.name}`,
            ),
          );
        return left.length === 0;
      },
      { timeoutMs: 180_000, intervalMs: 1000, describe: () => `still there: ${left.join(', ')}` },
    );
  });
});
