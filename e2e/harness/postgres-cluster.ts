// One PostgreSQLCluster as the suites and the cluster benchmark watch it: its status, its instance
// pods, waiting until it is healthy, the app role through the -rw Service, and the rows a write
// load left in it.
import { setTimeout as sleep } from 'node:timers/promises';
import type { V1Pod, V1Secret, V1Service } from '@kubernetes/client-node';
import { waitUntil } from '@homeostat/testing';
import { getObject, listObjects } from './cluster-access.ts';
import { pollRoleInPod, queryOnce, type PostgresTarget, type RoleSample } from './postgres-client.ts';
import { isPodReady } from './workloads.ts';

export interface PostgresClusterObject {
  metadata: { uid: string; generation: number };
  spec: { instances: number; primary?: string };
  status?: {
    observedGeneration?: number;
    phase?: string;
    instances?: number;
    readyInstances?: number;
    currentPrimary?: string;
    targetPrimary?: string;
    timeline?: number;
    failovers?: number;
    switchovers?: number;
    operation?: { kind: string; step: string };
    instanceStatuses?: { name: string; role: string; ready: boolean; timeline?: number }[];
    conditions?: { type: string; status: string; reason: string; message: string }[];
  };
}

const decode = (secret: V1Secret | undefined, key: string) =>
  Buffer.from(secret?.data?.[key] ?? '', 'base64').toString('utf8');

export class PostgresClusterUnderTest {
  readonly namespace: string;
  readonly name: string;

  constructor(namespace: string, name: string) {
    this.namespace = namespace;
    this.name = name;
  }

  /** The label selector of its instance pods (and everything else it owns). */
  get selector(): string {
    return `postgres.homeostat.dev/cluster=${this.name}`;
  }

  get(): Promise<PostgresClusterObject | undefined> {
    return getObject<PostgresClusterObject>('postgresqlcluster', this.name, this.namespace);
  }

  pods(): Promise<V1Pod[]> {
    return listObjects<V1Pod>('pods', this.namespace, this.selector);
  }

  /** Waits until `instances` instances are ready in their roles, nothing in progress, status current. */
  async waitHealthy(
    instances: number,
    what = 'healthy',
    timeoutMs = 300_000,
  ): Promise<PostgresClusterObject> {
    let last: PostgresClusterObject | undefined;
    let ready: string[] = [];
    await waitUntil(
      `PostgreSQLCluster ${this.namespace}/${this.name} ${what} with ${instances} instances`,
      async () => {
        last = await this.get();
        const pods = await this.pods();
        ready = pods.filter(isPodReady).map((p) => p.metadata?.name ?? '');
        const s = last?.status;
        return (
          s?.observedGeneration === last?.metadata.generation &&
          s?.phase === 'Healthy' &&
          s.operation === undefined &&
          s.readyInstances === instances &&
          s.instances === instances &&
          pods.length === instances &&
          ready.length === instances
        );
      },
      {
        timeoutMs,
        intervalMs: 1000,
        describe: () => `ready pods [${ready.join(', ')}]; status ${JSON.stringify(last?.status)}`,
      },
    );
    if (!last) throw new Error('unreachable: waitUntil returned without a cluster');
    return last;
  }

  /** The app role through the -rw Service's ClusterIP, from where the caller runs, over verified TLS. */
  async readWriteTarget(): Promise<PostgresTarget> {
    const secret = await getObject<V1Secret>('secret', `${this.name}-app`, this.namespace);
    const service = await getObject<V1Service>('service', `${this.name}-rw`, this.namespace);
    return {
      host: service?.spec?.clusterIP ?? '',
      port: Number(decode(secret, 'port')),
      user: decode(secret, 'username'),
      password: decode(secret, 'password'),
      database: decode(secret, 'dbname'),
      // Verified as the application would (verify-full): the CA from the Secret, the Service's name.
      ca: decode(secret, 'ca.crt'),
      servername: decode(secret, 'host'),
    };
  }

  /**
   * Polls pg_is_in_recovery() in every instance pod there is, pods created later included, each
   * through its own Unix socket (so a pod whose network is cut still answers).
   */
  watchRoles(intervalMs = 200): { samples: RoleSample[]; stop(): Promise<void> } {
    const samples: RoleSample[] = [];
    const polled = new Map<string, ReturnType<typeof pollRoleInPod>>();
    let stopped = false;
    const scan = (async () => {
      while (!stopped) {
        for (const pod of await this.pods().catch(() => [])) {
          const uid = pod.metadata?.uid ?? '';
          if (polled.has(uid) || pod.status?.phase !== 'Running') continue;
          polled.set(
            uid,
            pollRoleInPod(this.namespace, pod.metadata?.name ?? '', (s) => samples.push(s), intervalMs),
          );
        }
        await sleep(1000);
      }
    })();
    return {
      samples,
      async stop() {
        stopped = true;
        await scan;
        for (const poll of polled.values()) poll.stop();
      },
    };
  }

  /** The pod of the instance the status names primary. */
  async primaryPod(): Promise<V1Pod> {
    const primary = (await this.get())?.status?.currentPrimary;
    const pod = (await this.pods()).find((p) => p.metadata?.name === primary);
    if (!pod) throw new Error(`the primary ${primary} has no pod`);
    return pod;
  }

  /**
   * The ids in the write load's table, read through -rw; retried for a minute, as a primary
   * restarted in place may still be fenced by a failover that had begun (a second, short outage).
   */
  async presentRows(): Promise<Set<number>> {
    let rows: { id: string }[] | undefined;
    await waitUntil(
      `rows readable through ${this.name}-rw`,
      async () => {
        rows = await queryOnce<{ id: string }>(await this.readWriteTarget(), 'SELECT id FROM acked').catch(
          () => undefined,
        );
        return rows !== undefined;
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    return new Set((rows ?? []).map((r) => Number(r.id)));
  }
}

/**
 * The suites' three-instance PostgreSQLCluster: small buffers, synchronous replication `required`
 * (an acknowledged write is on a replica too), database and owner `orders`; `scheduling` as given.
 */
export function requiredSyncCluster(namespace: string, name: string, scheduling?: object): object {
  return {
    apiVersion: 'postgres.homeostat.dev/v1alpha1',
    kind: 'PostgreSQLCluster',
    metadata: { name, namespace },
    spec: {
      instances: 3,
      storage: { size: '1Gi' },
      postgresql: {
        parameters: { shared_buffers: '16MB', max_connections: '50' },
        synchronous: { mode: 'required', number: 1 },
      },
      ...(scheduling ? { scheduling } : {}),
      bootstrap: { database: 'orders', owner: 'orders' },
    },
  };
}
