// The faults `bench:chaos:postgres` causes on a PostgreSQLCluster, each as a user or a cluster
// causes it: a blunt `kubectl delete`, a SIGKILL on the node, a network cut inside the pod, the
// operator killed while it fails over, a replica restarted mid-failover, a synchronous standby
// whose replay is paused, and on a kind cluster the primary's node stopped (`docker stop`, as a
// machine failing). Each fault returns once it is caused; ending it (a cut restored, replay
// resumed, the node started again) is its `settle`, run before the cluster is expected healthy
// again.
import { setTimeout as sleep } from 'node:timers/promises';
import type { V1Pod } from '@kubernetes/client-node';
import { kubectl, listObjects } from '../../e2e/harness/cluster-access.ts';
import { cutPodNetwork, killOnNode, podOnNode, postmasterOf } from '../../e2e/harness/pod-processes.ts';
import type { PostgresClusterUnderTest } from '../../e2e/harness/postgres-cluster.ts';
import { waitUntil } from '@homeostat/testing';
import type { NodeStops } from '../support/node-stops.ts';

export const faultKinds = [
  'primary-pod-force-deleted',
  'primary-postgres-sigkill',
  'all-pods-deleted',
  'primary-network-cut',
  'operator-killed-mid-failover',
  'replica-restarted-mid-failover',
  'sync-standby-replay-paused',
  'primary-node-stopped',
] as const;
export type FaultKind = (typeof faultKinds)[number];

/** Kinds that stop a node: only on a kind cluster of three or more workers. */
export const nodeStopKinds: readonly FaultKind[] = ['primary-node-stopped'];

/** What a fault needs to reach: the cluster, and the operator's release (to kill its pod). */
export interface FaultTarget {
  cluster: PostgresClusterUnderTest;
  operatorRelease: string;
  /** A number in [0, 1), from the run's seeded generator (random delays inside a fault). */
  random: () => number;
  /** The kind nodes the run stops (each started again when the run ends). */
  nodes: NodeStops;
}

/** A fault that has happened; `settle` ends it (restores the network, resumes replay). */
export interface CausedFault {
  settle: () => Promise<void>;
}

const noSettle: CausedFault = { settle: async () => {} };

async function forceDelete(namespace: string, pods: readonly string[]): Promise<void> {
  await kubectl(['-n', namespace, 'delete', 'pod', ...pods, '--grace-period=0', '--force', '--wait=false']);
}

async function killPostgres(pod: V1Pod): Promise<void> {
  const onNode = podOnNode(pod);
  let postmaster: Awaited<ReturnType<typeof postmasterOf>>;
  await waitUntil(
    `the postgres process of pod ${pod.metadata?.name}`,
    async () => (postmaster = await postmasterOf(onNode)) !== undefined,
    { timeoutMs: 60_000, intervalMs: 200 },
  );
  if (postmaster) await killOnNode(onNode, postmaster);
}

/** Runs SQL as the operator's role through the pod's own socket (its network may be cut). */
async function sqlInPod(namespace: string, pod: string, sql: string): Promise<string> {
  const script = [
    'export PGPASSWORD="$(cat /etc/homeostat/operator/password)"',
    `psql -h /var/run/postgresql -U "$(cat /etc/homeostat/operator/username)" -d postgres -qAtX -c ${JSON.stringify(sql)}`,
  ].join('\n');
  return kubectl(['-n', namespace, 'exec', pod, '-c', 'postgres', '--', 'bash', '-c', script]);
}

/** The replica the primary names synchronous (sync_state 'quorum' or 'sync'), if any. */
async function synchronousStandby(namespace: string, primary: string): Promise<string | undefined> {
  const names = await sqlInPod(
    namespace,
    primary,
    "SELECT application_name FROM pg_stat_replication WHERE sync_state IN ('sync', 'quorum') ORDER BY 1",
  ).catch(() => '');
  return names.split('\n').find((n) => n.trim() !== '');
}

/**
 * Causes one fault of `kind` on the cluster, which must be healthy. Its `settle` ends the fault,
 * then waits until the cluster has been seen to meet it (faultSeen): until then the status still
 * reads healthy from before, and a next fault would land on a cluster still recovering.
 */
export async function causeFault(kind: FaultKind, target: FaultTarget): Promise<CausedFault> {
  const at = Date.now();
  const primaryName = (await target.cluster.primaryPod()).metadata?.name ?? '';
  const caused = await causeFaultOnly(kind, target);
  return {
    settle: async () => {
      await caused.settle();
      await faultSeen(target.cluster, primaryName, at);
    },
  };
}

/**
 * Until another instance is primary, or the primary's postgres container started after `at` (the
 * kubelet restarted it, or its pod was made again): a fault the cluster has met either way. At
 * most a minute: a fault it rode out without either (a cut ended before anything failed) goes on.
 */
async function faultSeen(cluster: PostgresClusterUnderTest, primaryName: string, at: number): Promise<void> {
  await waitUntil(
    `the cluster meets the fault (another primary than ${primaryName}, or its postgres started again)`,
    async () => {
      if ((await cluster.get())?.status?.currentPrimary !== primaryName) return true;
      const pod = (await cluster.pods()).find((p) => p.metadata?.name === primaryName);
      const postgres = pod?.status?.containerStatuses?.find((c) => c.name === 'postgres');
      const started = postgres?.state?.running?.startedAt;
      return started !== undefined && new Date(started).getTime() >= at - 1000;
    },
    { timeoutMs: 60_000, intervalMs: 250 },
  ).catch(() => undefined);
}

async function causeFaultOnly(kind: FaultKind, target: FaultTarget): Promise<CausedFault> {
  const { cluster, random } = target;
  const namespace = cluster.namespace;
  const primary = await cluster.primaryPod();
  const primaryName = primary.metadata?.name ?? '';
  const replicas = (await cluster.pods()).filter((p) => p.metadata?.name !== primaryName);
  // Until the status names another primary, or `timeoutMs` passed (the fault then ends anyway).
  const anotherPrimary = (timeoutMs: number) =>
    waitUntil(
      `another primary than ${primaryName}`,
      async () => (await cluster.get())?.status?.currentPrimary !== primaryName,
      { timeoutMs, intervalMs: 500 },
    ).catch(() => undefined);
  switch (kind) {
    case 'primary-node-stopped': {
      const node = await target.nodes.stop(podOnNode(primary).node);
      return {
        settle: async () => {
          // The node stays away until another instance took over (or 180 s), as a machine that
          // failed for good would; then it comes back and the old primary must rejoin.
          await anotherPrimary(180_000);
          await target.nodes.start(node);
        },
      };
    }
    case 'primary-pod-force-deleted':
      await forceDelete(namespace, [primaryName]);
      return noSettle;
    case 'primary-postgres-sigkill':
      await killPostgres(primary);
      return noSettle;
    case 'all-pods-deleted':
      // A plain, graceful delete of every instance, as `kubectl delete pod a b c` does.
      await kubectl([
        '-n',
        namespace,
        'delete',
        'pod',
        ...[primary, ...replicas].map((p) => p.metadata?.name ?? ''),
        '--wait=false',
      ]);
      return noSettle;
    case 'primary-network-cut': {
      const restore = await cutPodNetwork(podOnNode(primary));
      return {
        settle: async () => {
          // The cut lasts until another instance took over (or 30 s), as a real partition would.
          await anotherPrimary(30_000);
          await restore();
        },
      };
    }
    case 'operator-killed-mid-failover': {
      await killPostgres(primary);
      await sleep(500 + random() * 3000);
      const operatorPods = await listObjects<V1Pod>(
        'pods',
        namespace,
        `app.kubernetes.io/instance=${target.operatorRelease}`,
      );
      await forceDelete(
        namespace,
        operatorPods.map((p) => p.metadata?.name ?? ''),
      );
      return noSettle;
    }
    case 'replica-restarted-mid-failover': {
      await forceDelete(namespace, [primaryName]);
      await sleep(random() * 2500);
      const replica = replicas[Math.floor(random() * replicas.length)];
      if (replica)
        await kubectl(['-n', namespace, 'delete', 'pod', replica.metadata?.name ?? '', '--wait=false']);
      return noSettle;
    }
    case 'sync-standby-replay-paused': {
      // The synchronous standby keeps receiving (and acknowledging) but stops replaying; then the
      // primary dies: only a standby holding every acknowledged commit may be promoted.
      const standby = (await synchronousStandby(namespace, primaryName)) ?? replicas[0]?.metadata?.name ?? '';
      await sqlInPod(namespace, standby, 'SELECT pg_wal_replay_pause()');
      await sleep(2000 + random() * 3000);
      await killPostgres(primary);
      return {
        settle: async () => {
          await sleep(5000);
          // Promotion ends a pause by itself; a standby still paused is resumed.
          await sqlInPod(namespace, standby, 'SELECT pg_wal_replay_resume()').catch(() => '');
        },
      };
    }
  }
}
