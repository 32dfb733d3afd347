// The faults `bench:chaos:etcd` causes on an EtcdCluster, each as a user or a cluster causes it: a
// blunt `kubectl delete` of a member's pod or of its claim, a SIGKILL on the node, the operator
// killed in the middle of a member replacement, a scale, a backup, a rolling upgrade or a restore
// into a new cluster, the operator alone cut off from the members (they stay healthy; only its
// connections to their client and peer ports drop), and on a kind cluster a member's node stopped
// (`docker stop`, as a machine failing).
// Each fault returns once it is caused; ending it (the cut restored, the backup finished) is its
// `settle`, run before the cluster is expected healthy again.
import { setTimeout as sleep } from 'node:timers/promises';
import type { V1Pod } from '@kubernetes/client-node';
import { waitUntil } from '@homeostat/testing';
import { apply, getObject, kubectl, listObjects } from '../../e2e/harness/cluster-access.ts';
import {
  getEtcdCluster,
  memberSelector,
  waitForMembers,
  type EtcdBackupObject,
} from '../../e2e/harness/etcd-clusters.ts';
import { cutPodNetwork, killOnNode, podOnNode, processNamed } from '../../e2e/harness/pod-processes.ts';
import { waitForNodeReady } from '../../e2e/harness/stoppable-node.ts';
import type { NodeStops } from '../support/node-stops.ts';

export const faultKinds = [
  'member-pod-force-deleted',
  'member-etcd-sigkill',
  'member-claim-deleted',
  'operator-killed-mid-replacement',
  'operator-killed-mid-scale',
  'operator-killed-mid-backup',
  'operator-killed-mid-upgrade',
  'operator-killed-mid-restore',
  'operator-cut-off-from-members',
  'member-node-stopped',
] as const;
export type FaultKind = (typeof faultKinds)[number];

/** Kinds that stop a node: only on a kind cluster of three or more workers. */
export const nodeStopKinds: readonly FaultKind[] = ['member-node-stopped'];

/**
 * Faults a run causes once at most: an upgrade moves etcd's cluster version for good (the cluster
 * starts on the oldest supported version and cannot go back once every member runs the newest).
 */
export const oneShotKinds: readonly FaultKind[] = ['operator-killed-mid-upgrade'];

/** What a fault needs to reach: the cluster, its size now, and the operator's release. */
export interface FaultTarget {
  readonly namespace: string;
  readonly cluster: string;
  readonly size: number;
  readonly operatorRelease: string;
  /** How long the operator waits before it restores a cluster it believes lost (spec.recovery). */
  readonly recoveryAfterSeconds: number;
  /** A number in [0, 1), from the run's seeded generator (which member, random delays). */
  readonly random: () => number;
  /** The version an upgrade fault moves the cluster to. */
  readonly upgradeTo: string;
  /** A Succeeded EtcdBackup of the cluster, which a restore fault restores into a new cluster. */
  readonly backupName: string;
  /** The kind nodes the run stops (each started again when the run ends). */
  readonly nodes: NodeStops;
}

/** A fault that has happened; `settle` ends it and says what went wrong with the fault's own work. */
export interface CausedFault {
  /** The cluster's size once the fault has settled (a scale changes it). */
  readonly size: number;
  settle(): Promise<{ problem?: string }>;
}

/** Sizes a scale fault moves between. */
const scaleSizes = [3, 5] as const;
let backups = 0;
let restores = 0;

async function forceDelete(namespace: string, pods: readonly string[]): Promise<void> {
  await kubectl(['-n', namespace, 'delete', 'pod', ...pods, '--grace-period=0', '--force', '--wait=false']);
}

async function killOperator(target: FaultTarget): Promise<void> {
  const pods = await listObjects<V1Pod>(
    'pods',
    target.namespace,
    `app.kubernetes.io/instance=${target.operatorRelease}`,
  );
  await forceDelete(
    target.namespace,
    pods.map((p) => p.metadata?.name ?? ''),
  );
}

/** Deletes a member's claim and then its pod, as a lost volume looks to the operator. */
async function loseMemberVolume(namespace: string, member: string): Promise<void> {
  await kubectl(['-n', namespace, 'delete', 'pvc', `${member}-data`, '--wait=false']);
  await kubectl(['-n', namespace, 'delete', 'pod', member, '--wait=false']);
}

/** Changes the EtcdCluster's spec as a user's `kubectl patch` does. */
async function patchSpec(namespace: string, cluster: string, spec: Record<string, unknown>): Promise<void> {
  await kubectl([
    '-n',
    namespace,
    'patch',
    'etcdcluster',
    cluster,
    '--type=merge',
    '-p',
    JSON.stringify({ spec }),
  ]);
}

const settled: CausedFault['settle'] = async () => ({});

/** Causes one fault of `kind` on the cluster, which must be healthy at `target.size`. */
export async function causeFault(kind: FaultKind, target: FaultTarget): Promise<CausedFault> {
  const { namespace, cluster, size, random } = target;
  const pods = await listObjects<V1Pod>('pods', namespace, memberSelector(cluster));
  const members = pods.map((p) => p.metadata?.name ?? '').sort();
  const member = members[Math.floor(random() * members.length)] ?? `${cluster}-0`;
  const same = (caused: Omit<CausedFault, 'size'>): CausedFault => ({ size, ...caused });
  switch (kind) {
    case 'member-node-stopped': {
      // The node of a random member among those whose node holds a minority of the members (the
      // default spread is Preferred: two members may share a node), so the members left keep a
      // quorum and no restore may start.
      const nodeOf = new Map(pods.map((p) => [p.metadata?.name ?? '', p.spec?.nodeName ?? '']));
      const onNode = (n: string) => [...nodeOf.values()].filter((m) => m === n).length;
      const minority = members.filter(
        (m) => nodeOf.get(m) && 2 * onNode(nodeOf.get(m) ?? '') < members.length,
      );
      const chosen = minority[Math.floor(random() * minority.length)];
      const nodeName = chosen ? nodeOf.get(chosen) : undefined;
      if (!chosen || !nodeName)
        throw new Error(`no node holds a minority of the members: ${JSON.stringify([...nodeOf])}`);
      const node = await target.nodes.stop(nodeName);
      return same({
        settle: async () => {
          // The node stays away until the control plane calls it NotReady and the operator
          // reports the member not ready (as a machine failing is noticed), then comes back.
          let problem: string | undefined;
          await waitForNodeReady(node.name, false).catch(() => {
            problem = `node ${node.name} never reported NotReady`;
          });
          await waitUntil(
            `the status shows ${chosen} not ready`,
            async () =>
              ((await getEtcdCluster(namespace, cluster))?.status?.members ?? []).some(
                (m) => m.name === chosen && !m.ready,
              ),
            { timeoutMs: 120_000, intervalMs: 1000 },
          ).catch(() => {
            problem ??= `the status never showed ${chosen} not ready while its node was stopped`;
          });
          await target.nodes.start(node);
          return problem ? { problem } : {};
        },
      });
    }
    case 'member-pod-force-deleted':
      await forceDelete(namespace, [member]);
      return same({ settle: settled });
    case 'member-etcd-sigkill': {
      const pod = await getObject<V1Pod>('pod', member, namespace);
      const onNode = pod ? podOnNode(pod) : undefined;
      const etcd = onNode ? await processNamed(onNode, 'etcd') : undefined;
      if (!onNode || !etcd) throw new Error(`no etcd process in pod ${member}`);
      await killOnNode(onNode, etcd);
      return same({ settle: settled });
    }
    case 'member-claim-deleted':
      await loseMemberVolume(namespace, member);
      return same({ settle: settled });
    case 'operator-killed-mid-replacement':
      await loseMemberVolume(namespace, member);
      await sleep(random() * 8000);
      await killOperator(target);
      return same({ settle: settled });
    case 'operator-killed-mid-scale': {
      const next = scaleSizes.find((s) => s !== size) ?? 3;
      await patchSpec(namespace, cluster, { size: next });
      await sleep(random() * 10_000);
      await killOperator(target);
      return { size: next, settle: settled };
    }
    case 'operator-killed-mid-backup': {
      const name = `${cluster}-chaos-${++backups}`;
      await apply([
        {
          apiVersion: 'etcd.homeostat.dev/v1alpha1',
          kind: 'EtcdBackup',
          metadata: { name, namespace },
          spec: { clusterName: cluster },
        },
      ]);
      await sleep(random() * 3000);
      await killOperator(target);
      return same({
        settle: async () => {
          let phase: string | undefined;
          await waitUntil(
            `EtcdBackup ${name} finished after the operator's restart`,
            async () => {
              phase = (await getObject<EtcdBackupObject>('etcdbackup', name, namespace))?.status?.phase;
              return phase === 'Succeeded' || phase === 'Failed';
            },
            { timeoutMs: 180_000, intervalMs: 1000 },
          ).catch(() => undefined);
          return phase === 'Succeeded' ? {} : { problem: `backup ${name} ended ${phase ?? 'unfinished'}` };
        },
      });
    }
    case 'operator-killed-mid-upgrade': {
      await patchSpec(namespace, cluster, { version: target.upgradeTo });
      await sleep(random() * 15_000);
      await killOperator(target);
      return same({
        settle: async () => {
          const upgraded = await waitForMembers(namespace, cluster, size, {
            version: target.upgradeTo,
            timeoutMs: 300_000,
          }).then(
            () => true,
            () => false,
          );
          return upgraded ? {} : { problem: `not every member on ${target.upgradeTo}` };
        },
      });
    }
    case 'operator-killed-mid-restore': {
      // A new one-member cluster from the backup, the operator killed while it restores; once
      // restored it must answer as an etcd cluster of its own, and it is deleted again.
      const restored = `${cluster}-restored-${++restores}`;
      await apply([
        {
          apiVersion: 'etcd.homeostat.dev/v1alpha1',
          kind: 'EtcdCluster',
          metadata: { name: restored, namespace },
          spec: {
            size: 1,
            storage: { size: '1Gi' },
            resources: { requests: { cpu: '20m', memory: '64Mi' } },
            bootstrap: { fromBackup: { backupName: target.backupName } },
          },
        },
      ]);
      await sleep(random() * 8000);
      await killOperator(target);
      return same({
        settle: async () => {
          const outcome = await waitForMembers(namespace, restored, 1, { timeoutMs: 180_000 }).then(
            (c) => (c.status?.clusterId ? {} : { problem: `${restored} has no cluster ID` }),
            (error: unknown) => ({ problem: `${restored} not restored: ${String(error).split('\n')[0]}` }),
          );
          await kubectl([
            '-n',
            namespace,
            'delete',
            'etcdcluster',
            restored,
            '--wait=true',
            '--timeout=120s',
          ]).catch(() => '');
          return outcome;
        },
      });
    }
    case 'operator-cut-off-from-members': {
      // The members stay healthy and keep serving clients; only the operator cannot reach them,
      // for longer than it waits before restoring a cluster it believes lost.
      const pods = await listObjects<V1Pod>(
        'pods',
        namespace,
        `app.kubernetes.io/instance=${target.operatorRelease}`,
      );
      const restores = await Promise.all(
        pods.map((p) => cutPodNetwork(podOnNode(p), { outgoingTcpPorts: [2379, 2380] })),
      );
      return same({
        settle: async () => {
          await sleep((target.recoveryAfterSeconds + 15) * 1000);
          for (const restore of restores) await restore();
          return {};
        },
      });
    }
  }
}
