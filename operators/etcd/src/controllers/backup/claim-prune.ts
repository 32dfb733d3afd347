// Retention of backups in a PersistentVolumeClaim: the operator cannot mount the claim, so a
// short-lived pod of its own image deletes the backup's files (claim-delete-agent.ts), as one
// writes them (claim-backup.ts) and one checks them (claim-verify.ts). One pod per EtcdBackup,
// found again by name after an operator restart, deleted once it has answered; the caller deletes
// the EtcdBackup only after that, so a backup is never forgotten while its file is still there.
import { builtin, type KubeClient } from '@homeostat/reconcile';
import { etcdBackups, type EtcdBackup } from '../../api/etcd-backup-types.ts';
import { terminationLog } from '../../backup/claim-backup-agent.ts';
import { claimAgentPod, claimMountPath } from './claim-backup-pod.ts';
import type { ClaimFile } from './restore-source.ts';

/** `etcd-prune-<uid>`: one pod per EtcdBackup whose files are deleted. */
export const claimPrunePodName = (backup: EtcdBackup): string =>
  `etcd-prune-${(backup.metadata?.uid ?? '').slice(0, 13)}`;

export type ClaimPruneOutcome =
  | { readonly kind: 'running' }
  /** The files are gone (or were already); the EtcdBackup may go. */
  | { readonly kind: 'deleted' }
  /** The EtcdBackup itself is gone already: nothing to start. */
  | { readonly kind: 'gone' }
  | { readonly kind: 'failed'; readonly message: string };

/** Starts the pod that deletes `file` if missing, or reads its outcome (deleting it once finished). */
export async function claimPruneStep(input: {
  readonly backup: EtcdBackup;
  readonly file: ClaimFile;
  readonly image: string;
  readonly client: KubeClient;
}): Promise<ClaimPruneOutcome> {
  const { backup, file, client } = input;
  const namespace = backup.metadata?.namespace ?? '';
  const name = claimPrunePodName(backup);
  const pod = await client.find(builtin.pods, name, namespace);
  if (!pod) {
    // The cache may still show a backup deleted a moment ago: a pod owned by it would be left over.
    const live = await client.find(etcdBackups, backup.metadata?.name ?? '', namespace);
    if (!live || live.metadata?.uid !== backup.metadata?.uid) return { kind: 'gone' };
    await client.create(
      builtin.pods,
      claimAgentPod({
        name,
        owner: backup,
        label: backup.metadata?.name ?? '',
        claimName: file.claimName,
        readOnly: false,
        container: {
          name: 'prune',
          image: input.image,
          args: [
            'delete-claim-backup',
            `--file=${claimMountPath}/${file.path}`,
            `--result-file=${terminationLog}`,
          ],
          resources: { requests: { cpu: '10m', memory: '32Mi' }, limits: { memory: '128Mi' } },
        },
      }),
    );
    return { kind: 'running' };
  }
  const phase = pod.status?.phase;
  if (phase !== 'Succeeded' && phase !== 'Failed') return { kind: 'running' };
  const terminated = pod.status?.containerStatuses?.[0]?.state?.terminated;
  const message = (terminated?.message ?? terminated?.reason ?? `pod ${name} ${phase}`).trim();
  await client.delete(builtin.pods, name, namespace, { uid: pod.metadata?.uid ?? '' });
  return phase === 'Succeeded'
    ? { kind: 'deleted' }
    : { kind: 'failed', message: `pod ${name} failed: ${message.slice(-600)}` };
}
