// What the etcd suites and `npm start` read of an EtcdCluster, and how they reach its members:
// etcdctl inside a member's pod (over TLS, with the member's own certificate) and waits on status.
import type { V1Pod } from '@kubernetes/client-node';
import { waitUntil } from '@homeostat/testing';
import { getObject, kubectl, listObjects } from './cluster-access.ts';
import { isPodReady } from './workloads.ts';

export interface EtcdMemberStatus {
  name: string;
  id?: string;
  role?: string;
  ready: boolean;
  version?: string;
}

export interface EtcdClusterObject {
  metadata: { uid: string; generation: number };
  spec: { size: number; version?: string };
  status?: {
    phase?: string;
    readyMembers?: number;
    clusterId?: string;
    clientSecret?: string;
    clientEndpoint?: string;
    currentVersion?: string;
    clusterVersion?: string;
    observedGeneration?: number;
    members?: EtcdMemberStatus[];
    conditions?: { type: string; status: string; reason: string; message: string }[];
    recovery?: {
      phase: string;
      generation: number;
      backupName?: string;
      startedAt?: string;
      finishedAt?: string;
    };
    lastVerifiedBackup?: {
      backup: string;
      restorePoint: string;
      verifiedAt: string;
      restoreSeconds: number;
      recoveryPointSeconds: number;
      revision: string;
      hashKV: string;
    };
    lastBackupDrillTime?: string;
    lastBackupDrillRequest?: string;
  };
}

/** The label selector of a cluster's member pods. */
export const memberSelector = (cluster: string): string =>
  `app.kubernetes.io/name=etcd,app.kubernetes.io/instance=${cluster}`;

export const getEtcdCluster = (namespace: string, name: string) =>
  getObject<EtcdClusterObject>('etcdcluster', name, namespace);

/**
 * Waits until status shows `size` ready voting members (each on `version` when given), the
 * cluster Running at the spec's generation, and exactly `size` Ready member pods.
 */
export async function waitForMembers(
  namespace: string,
  name: string,
  size: number,
  options: { version?: string; timeoutMs?: number } = {},
): Promise<EtcdClusterObject> {
  let last: EtcdClusterObject | undefined;
  await waitUntil(
    `EtcdCluster ${namespace}/${name}: ${size} ready voting members${options.version ? ` on ${options.version}` : ''}`,
    async () => {
      // Both read at once: a look costs one kubectl round trip, not two in a row.
      const [cluster, pods] = await Promise.all([
        getEtcdCluster(namespace, name),
        listObjects<V1Pod>('pods', namespace, memberSelector(name)),
      ]);
      last = cluster;
      const members = last?.status?.members ?? [];
      const voters = members.filter(
        (m) => m.role === 'Voter' && m.ready && (!options.version || m.version === options.version),
      );
      return (
        last?.status?.phase === 'Running' &&
        last.status.observedGeneration === last.metadata.generation &&
        members.length === size &&
        voters.length === size &&
        pods.length === size &&
        pods.every(isPodReady)
      );
    },
    {
      timeoutMs: options.timeoutMs ?? 300_000,
      intervalMs: 1000,
      describe: () => `status: ${JSON.stringify(last?.status)}`,
    },
  );
  if (!last) throw new Error(`EtcdCluster ${namespace}/${name} not found`);
  return last;
}

const memberTls = '/etc/etcd/tls/server';
// etcdctl in a member's pod reaches its own member over TLS with the member's serving certificate
// (it may act as a client).
const memberEtcdctlFlags = [
  '--endpoints=https://localhost:2379',
  `--cacert=${memberTls}/ca.crt`,
  `--cert=${memberTls}/tls.crt`,
  `--key=${memberTls}/tls.key`,
];

/** etcdctl inside a member's pod, over TLS with the member's serving certificate (it may act as a client). */
export function memberEtcdctl(namespace: string, member: string, args: readonly string[]): Promise<string> {
  return inMember(namespace, member, ['etcdctl', ...memberEtcdctlFlags, ...args]);
}

/** `command` run in a member pod's etcd container. */
function inMember(namespace: string, member: string, command: readonly string[]): Promise<string> {
  return kubectl(['-n', namespace, 'exec', member, '-c', 'etcd', '--', ...command]);
}

/**
 * Puts each key with its value inside a member's pod, one `etcdctl put` after another as
 * `memberEtcdctl` would, but in one `kubectl exec`: an exec per key paid its round trips through the
 * API server and the kubelet every time. Fails at the first put that fails.
 */
export async function memberPuts(
  namespace: string,
  member: string,
  entries: readonly (readonly [key: string, value: string])[],
): Promise<void> {
  // The keys and values reach the loop as arguments, never as shell text.
  const script = `set -e; while [ "$#" -gt 0 ]; do etcdctl ${memberEtcdctlFlags.join(' ')} put -- "$1" "$2" >/dev/null; shift 2; done`;
  await inMember(namespace, member, ['bash', '-c', script, 'member-puts', ...entries.flat()]);
}

/** The values under `prefix` as one member serves them from its own copy (serializable read). */
export async function memberValues(namespace: string, member: string, prefix: string): Promise<string[]> {
  const out = await memberEtcdctl(namespace, member, [
    'get',
    prefix,
    '--prefix',
    '--print-value-only',
    '--consistency=s',
  ]);
  return out
    .split('\n')
    .filter((line) => line !== '')
    .sort();
}

/** etcd's own member list (ID, status, name, peer URLs, client URLs, learner), as etcdctl prints it. */
export async function etcdMemberList(
  namespace: string,
  member: string,
): Promise<{ id: string; started: boolean; name: string; learner: boolean }[]> {
  const out = await memberEtcdctl(namespace, member, ['member', 'list', '-w', 'json', '--hex']);
  const list = JSON.parse(out) as {
    members?: { ID: string; name?: string; clientURLs?: string[]; isLearner?: boolean }[];
  };
  return (list.members ?? []).map((m) => ({
    id: m.ID,
    name: m.name ?? '',
    // A member added but never started has no name and no client URLs yet.
    started: Boolean(m.name) && (m.clientURLs?.length ?? 0) > 0,
    learner: m.isLearner ?? false,
  }));
}

/** Reasons of the Events about one EtcdCluster, oldest first. */
export async function clusterEventReasons(namespace: string, name: string): Promise<string[]> {
  const events = await listObjects<{
    reason: string;
    eventTime?: string;
    regarding?: { name: string; kind: string };
  }>('events.events.k8s.io', namespace);
  return events
    .filter((e) => e.regarding?.kind === 'EtcdCluster' && e.regarding.name === name)
    .map((e) => e.reason);
}

/** Every key and value a member serves from its own copy, in key order (`etcdctl get "" --prefix`). */
export async function memberKeyValues(namespace: string, member: string): Promise<string> {
  return memberEtcdctl(namespace, member, ['get', '', '--prefix', '--consistency=s']);
}

/** The member's current revision and its hashKV at `revision` (default: that current revision). */
export async function memberHashKV(
  namespace: string,
  member: string,
  revision?: number,
): Promise<{ revision: number; hash: number }> {
  const status = JSON.parse(await memberEtcdctl(namespace, member, ['endpoint', 'status', '-w', 'json'])) as {
    Status: { header: { revision: number } };
  }[];
  const rev = revision ?? status[0]?.Status.header.revision ?? 0;
  const hashes = JSON.parse(
    await memberEtcdctl(namespace, member, ['endpoint', 'hashkv', `--rev=${rev}`, '-w', 'json']),
  ) as { HashKV: { hash: number } }[];
  return { revision: rev, hash: hashes[0]?.HashKV.hash ?? 0 };
}

export interface EtcdBackupObject {
  spec: { clusterName: string };
  status?: {
    phase?: string;
    location?: string;
    key?: string;
    sizeBytes?: number;
    sha256?: string;
    revision?: string;
    hashKV?: string;
    finishedAt?: string;
    conditions?: { type: string; status: string; reason: string; message: string }[];
    /** The last restore drill of this backup. */
    verification?: { result: string; drilledAt: string; reason?: string; message?: string };
  };
}

/** Waits until an EtcdBackup has Succeeded; fails at once with its conditions when it Failed. */
export async function waitForBackup(namespace: string, name: string): Promise<EtcdBackupObject> {
  let last: EtcdBackupObject | undefined;
  await waitUntil(
    `EtcdBackup ${namespace}/${name} Succeeded`,
    async () => {
      last = await getObject<EtcdBackupObject>('etcdbackup', name, namespace);
      return last?.status?.phase === 'Succeeded' || last?.status?.phase === 'Failed';
    },
    { timeoutMs: 300_000, intervalMs: 1000, describe: () => `status: ${JSON.stringify(last?.status)}` },
  );
  if (last?.status?.phase !== 'Succeeded')
    throw new Error(`EtcdBackup ${namespace}/${name} failed: ${JSON.stringify(last?.status?.conditions)}`);
  return last;
}

/** The label on a restore drill's pod and claim (its value: the cluster's name). */
export const drillSelector = (cluster: string): string => `etcd.homeostat.dev/drill=${cluster}`;

/**
 * Asks for a restore drill of the cluster's newest backup now, as the guide does (a new value of
 * the etcd.homeostat.dev/verify-backup annotation), and waits until the drill that answers this
 * request has left BackupVerified `expected`; returns the cluster then.
 */
export async function requestBackupDrill(
  namespace: string,
  name: string,
  request: string,
  expected: 'True' | 'False',
): Promise<EtcdClusterObject> {
  await kubectl([
    '-n',
    namespace,
    'annotate',
    'etcdcluster',
    name,
    `etcd.homeostat.dev/verify-backup=${request}`,
    '--overwrite',
  ]);
  let last: EtcdClusterObject | undefined;
  await waitUntil(
    `EtcdCluster ${namespace}/${name}: the drill of request ${request} done, BackupVerified ${expected}`,
    async () => {
      last = await getEtcdCluster(namespace, name);
      const verified = last?.status?.conditions?.find((c) => c.type === 'BackupVerified');
      // The request is recorded when the drill starts, the condition when it ends; the pod and
      // claim go after that.
      return (
        last?.status?.lastBackupDrillRequest === request &&
        verified?.status === expected &&
        (await listObjects('pods', namespace, drillSelector(name))).length === 0
      );
    },
    {
      timeoutMs: 300_000,
      intervalMs: 1000,
      describe: () =>
        JSON.stringify({
          lastBackupDrillRequest: last?.status?.lastBackupDrillRequest,
          conditions: last?.status?.conditions?.filter((c) => c.type === 'BackupVerified'),
        }),
    },
  );
  if (!last) throw new Error(`EtcdCluster ${namespace}/${name} not found`);
  return last;
}
