// The setup the controller tests share: a namespace ready for a PostgreSQLCluster, and the operator
// reaching its instances at the PostgreSQL processes that play the pods (pod-processes.ts).
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll } from 'vitest';
import type { Logger } from 'pino';
import type { KubeConfig } from '@kubernetes/client-node';
import { sharedKubeConfig } from '@homeostat/testing/shared';
import { memoryLogger } from '@homeostat/reconcile/testing';
import { installCrds, waitUntil } from '@homeostat/testing';
import { builtin, KubeClient, type Manager } from '@homeostat/reconcile';
import { postgresBackupCrd } from '../api/postgres-backup-crd.ts';
import { postgresClusterCrd } from '../api/postgres-cluster-crd.ts';
import { postgresClusters, type PostgresCluster } from '../api/postgres-cluster-types.ts';
import type { RestoreDrillControllerOptions } from '../controllers/backup/restore-drill-controller.ts';
import type { PostgresClusterControllerOptions } from '../controllers/postgres-cluster-controller.ts';
import type { BackupScheduleOptions } from '../controllers/backup/backup-schedule-controller.ts';
import { PodProcesses } from './pod-processes.ts';
import { testOperator } from './test-operator.ts';

/** The CRD, `namespace` and its default ServiceAccount (pods name it). */
export async function prepareNamespace(kubeConfig: KubeConfig, client: KubeClient, namespace: string) {
  await installCrds(kubeConfig, [postgresClusterCrd, postgresBackupCrd]);
  await client.create(builtin.namespaces, { metadata: { name: namespace } });
  await client.create(builtin.serviceAccounts, { metadata: { name: 'default', namespace } });
}

/** The operator (not started), reaching each instance at its process in `pods`, probing often. */
export function podOperator(
  kubeConfig: KubeConfig,
  namespace: string,
  log: Logger,
  pods: PodProcesses,
  controller: Partial<PostgresClusterControllerOptions> = {},
  drills: Partial<RestoreDrillControllerOptions> = {},
  schedule: Partial<BackupScheduleOptions> = {},
): Manager {
  return testOperator(
    kubeConfig,
    namespace,
    log,
    {
      instanceEndpoint: (_cluster, instance) => pods.endpoint(instance),
      connect: { connectTimeoutMs: 1000, statementTimeoutMs: 5000 },
      probeIntervalMs: 250,
      ...controller,
    },
    {},
    drills,
    schedule,
  );
}

/** A cluster with `spec` as a user writes it, partial: the API server fills in the defaults. */
export async function createCluster(
  client: KubeClient,
  namespace: string,
  name: string,
  spec: Record<string, unknown>,
) {
  await client.create(postgresClusters, {
    metadata: { name, namespace },
    spec,
  } as unknown as PostgresCluster);
}

/** A 3-instance cluster in `required` mode (one synchronous standby), failing over after 1 s. */
export const requiredSpec = {
  instances: 3,
  failoverDelay: '1s',
  postgresql: { synchronous: { mode: 'required', number: 1 } },
};

/** A cluster of `requiredSpec`. */
export async function createRequiredCluster(client: KubeClient, namespace: string, name: string) {
  await createCluster(client, namespace, name, requiredSpec);
}

/** A three-instance cluster with nothing in progress, Healthy, every instance ready. */
export const settled = (c: PostgresCluster): boolean =>
  !c.status?.operation && c.status?.phase === 'Healthy' && c.status.readyInstances === 3;

/**
 * Reads of one cluster for assertions: `get` (remembering the status), `events` of a reason
 * (oldest first), and `slow`, wait options under which a wait that fails prints the cluster's last
 * status and the operator's last log lines.
 */
export function clusterReader(
  client: KubeClient,
  namespace: string,
  cluster: string,
  lines: readonly Record<string, unknown>[],
) {
  let lastSeen = '';
  const logTail = () =>
    lines
      .slice(-30)
      .map((l) => `${String(l['controller'] ?? '')} ${String(l['msg'])} ${String(l['err'] ?? '')}`.trim())
      .join('\n');
  const get = async () => {
    const found = await client.get(postgresClusters, cluster, namespace);
    lastSeen = JSON.stringify(found.status, null, 1);
    return found;
  };
  const events = async (reason: string) =>
    (await client.list(builtin.events, { namespace })).items
      .filter((e) => e.regarding?.name === cluster && e.reason === reason)
      .sort((a, b) => String(a.eventTime).localeCompare(String(b.eventTime)));
  const slow = { timeoutMs: 100_000, intervalMs: 100, describe: () => `${lastSeen}\n${logTail()}` };
  return { get, events, slow };
}

/**
 * For a write refused since a moment ago: waits until a key backing off on it (5 ms doubling)
 * would wait longer than the failover is then given, freezes the primary `old` (alive, answering
 * nothing: no Kubernetes event says so) and waits for a replica's promotion and its
 * FailoverCompleted Event, which it returns.
 */
export async function failOverWhileRefused(
  pods: PodProcesses,
  reader: ReturnType<typeof clusterReader>,
  old: string,
) {
  await sleep(30_000);
  pods.instance(old).freeze();
  await waitUntil(
    'a replica promoted in place of the quiet primary',
    async () => {
      const status = (await reader.get()).status;
      return status?.currentPrimary !== old && !status?.operation;
    },
    { ...reader.slow, timeoutMs: 30_000 },
  );
  // Events are written in the background: wait for it rather than race it.
  await waitUntil(
    'FailoverCompleted recorded',
    async () => (await reader.events('FailoverCompleted')).length > 0,
    reader.slow,
  );
  return (await reader.events('FailoverCompleted'))[0];
}

/** What a controller suite's tests reach: the cluster's reads (clusterReader), its pods, the operator. */
export interface PodClusterSuite extends ReturnType<typeof clusterReader> {
  readonly kubeConfig: KubeConfig;
  /** Writes as a user would (field manager `test-user`). */
  readonly client: KubeClient;
  readonly namespace: string;
  readonly cluster: string;
  /** The test kubelet: every pod of the namespace as a PostgreSQL process. */
  readonly pods: PodProcesses;
  /** The operator's log lines. */
  readonly lines: readonly Record<string, unknown>[];
  /** Stops the operator (a restart's first half: its informers, queues and engine gone). */
  stopOperator(): Promise<void>;
  /** Starts a new operator, as after a restart. */
  startOperator(): Promise<void>;
}

export interface PodClusterSuiteOptions {
  /** The namespace, made for the suite (its name should carry the process id). */
  namespace: string;
  cluster: string;
  /**
   * The cluster as a user writes it (default `requiredSpec`), or a function giving it once `setUp`
   * ran; null: none made before the tests.
   */
  spec?: Record<string, unknown> | (() => Record<string, unknown>) | null;
  operator?: Partial<PostgresClusterControllerOptions>;
  drills?: Partial<RestoreDrillControllerOptions>;
  schedule?: Partial<BackupScheduleOptions>;
  /** Before the operator starts, once the namespace exists (a Secret, an S3 repository). */
  setUp?: (suite: PodClusterSuite) => Promise<void>;
  /** After the tests, once the operator and the pods stopped. */
  tearDown?: (suite: PodClusterSuite) => Promise<void>;
}

/**
 * A controller suite's test bed, its hooks registered in the calling `describe`: before all, the
 * namespace, `setUp`, the operator started, the cluster of `spec` made and the test kubelet
 * started; after all, the operator and the pods stopped, then `tearDown`, then the client.
 */
export function podClusterSuite(options: PodClusterSuiteOptions): PodClusterSuite {
  const { namespace, cluster } = options;
  const kubeConfig = sharedKubeConfig();
  const client = new KubeClient(kubeConfig, { fieldManager: 'test-user' });
  const { log, lines } = memoryLogger();
  const pods = new PodProcesses(client, namespace, cluster);
  let manager: Manager | undefined;
  const suite: PodClusterSuite = {
    ...clusterReader(client, namespace, cluster, lines),
    kubeConfig,
    client,
    namespace,
    cluster,
    pods,
    lines,
    async stopOperator() {
      await manager?.stop();
      manager = undefined;
    },
    async startOperator() {
      manager = podOperator(
        kubeConfig,
        namespace,
        log,
        pods,
        options.operator,
        options.drills,
        options.schedule,
      );
      await manager.start();
    },
  };
  beforeAll(async () => {
    await prepareNamespace(kubeConfig, client, namespace);
    await options.setUp?.(suite);
    await suite.startOperator();
    const spec = options.spec === undefined ? requiredSpec : options.spec;
    if (spec) await createCluster(client, namespace, cluster, typeof spec === 'function' ? spec() : spec);
    await pods.start();
  });
  afterAll(async () => {
    await suite.stopOperator();
    await pods.stop();
    await options.tearDown?.(suite);
    client.close();
  });
  return suite;
}
