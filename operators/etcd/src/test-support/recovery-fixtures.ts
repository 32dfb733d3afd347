// What the disaster-recovery tests share: a backup taken and waited for, members lost (with or
// without their data) as a node failure would lose them, and the wait for a finished recovery.
import { waitUntil } from '@homeostat/testing';
import { builtin, type KubeClient } from '@homeostat/reconcile';
import { etcdBackups, type EtcdBackup, type EtcdBackupSpecFields } from '../api/etcd-backup-types.ts';
import { etcdClusters, type EtcdCluster } from '../api/etcd-cluster-types.ts';
import { waitForVoters } from './cluster-clients.ts';

type Poll = { timeoutMs: number; intervalMs: number };

/** Creates an EtcdBackup of `cluster` (to its destination unless one is given); returns it Succeeded. */
export async function takeBackupOf(
  client: KubeClient,
  namespace: string,
  cluster: string,
  backup: string,
  poll: Poll,
  destination?: EtcdBackupSpecFields['destination'],
): Promise<EtcdBackup> {
  await client.create(etcdBackups, {
    metadata: { name: backup, namespace },
    spec: { clusterName: cluster, ...(destination ? { destination } : {}) },
  });
  await waitUntil(
    `${backup} Succeeded`,
    async () => (await client.get(etcdBackups, backup, namespace)).status?.phase === 'Succeeded',
    poll,
  );
  return client.get(etcdBackups, backup, namespace);
}

/** Deletes member pods, and with `withData` their claims first (their data), as a failed node would. */
export async function loseMembers(
  client: KubeClient,
  namespace: string,
  members: readonly string[],
  withData: boolean,
): Promise<void> {
  for (const member of members) {
    if (withData) await client.delete(builtin.persistentVolumeClaims, `${member}-data`, namespace);
    await client.delete(builtin.pods, member, namespace);
  }
}

/** Waits until the claims of `members` are released and gone. */
export async function waitForClaimsGone(
  client: KubeClient,
  namespace: string,
  members: readonly string[],
  poll: Poll,
): Promise<void> {
  await waitUntil(
    `claims of ${members.join(', ')} released and gone`,
    async () => {
      for (const member of members) {
        if (await client.find(builtin.persistentVolumeClaims, `${member}-data`, namespace)) return false;
      }
      return true;
    },
    poll,
  );
}

/** Waits for status.recovery Recovered, then for `size` ready voters; returns the cluster. */
export async function waitForRecovered(
  client: KubeClient,
  namespace: string,
  name: string,
  size: number,
  poll: Poll,
): Promise<EtcdCluster> {
  await waitUntil(
    `${name}: QuorumLost, then a new cluster restored from a backup`,
    async () => (await client.get(etcdClusters, name, namespace)).status?.recovery?.phase === 'Recovered',
    poll,
  );
  return waitForVoters(client, namespace, name, size, poll);
}
