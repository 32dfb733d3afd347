// A backup into a PersistentVolumeClaim, driven from the EtcdBackup reconciler: the operator cannot
// mount the claim, so a pod of its own image does (claim-backup-pod.ts, ADR 0302). One pod per
// backup, found again by name after an operator restart; its termination message is the backup
// record, read into status; the pod is deleted once recorded so the claim is free for the next.
import { Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { builtin, type KubeClient } from '@homeostat/reconcile';
import type { EtcdBackup } from '../../api/etcd-backup-types.ts';
import type { EtcdCluster } from '../../api/etcd-cluster-types.ts';
import { backupObjectName } from './backup-names.ts';
import type { BackupDestination } from './backup-store.ts';
import { claimBackupPod, claimBackupPodName } from './claim-backup-pod.ts';

type ClaimDestination = NonNullable<BackupDestination['persistentVolumeClaim']>;

/** The part of the engine's backup record the status takes (what the pod's message must hold). */
const PodResult = Type.Object({
  sizeBytes: Type.Integer(),
  sha256: Type.String({ pattern: '^[0-9a-f]{64}$' }),
  revision: Type.String(),
  hashKV: Type.Optional(Type.String({ pattern: '^[0-9]{1,10}$' })),
  compactRevision: Type.Optional(Type.String({ pattern: '^-?[0-9]{1,20}$' })),
  memberName: Type.String(),
  etcdVersion: Type.String(),
  finishedAt: Type.String(),
});

/** Where the file is, relative to the claim's directory, and as a location. */
export function claimLocation(backup: EtcdBackup, claim: ClaimDestination) {
  const key = backupObjectName(backup);
  const path = [claim.directory, key].filter(Boolean).join('/');
  return { key, location: `pvc://${claim.claimName}/${path}` };
}

export type ClaimBackupOutcome =
  | { readonly kind: 'started' | 'running' }
  | { readonly kind: 'succeeded'; readonly record: typeof PodResult.static }
  | { readonly kind: 'failed'; readonly message: string };

/** Makes the backup pod if missing, or reads its outcome (deleting it once finished). */
export async function claimBackupStep(input: {
  readonly backup: EtcdBackup;
  readonly cluster: EtcdCluster;
  readonly claim: ClaimDestination;
  readonly endpoints: readonly string[];
  readonly image: string;
  readonly client: KubeClient;
}): Promise<ClaimBackupOutcome> {
  const { backup, claim, client } = input;
  const namespace = backup.metadata?.namespace ?? '';
  const name = claimBackupPodName(backup);
  const pod = await client.find(builtin.pods, name, namespace);
  if (!pod) {
    const { key } = claimLocation(backup, claim);
    const slash = key.lastIndexOf('/');
    await client.create(
      builtin.pods,
      claimBackupPod({
        backup,
        cluster: input.cluster,
        claimName: claim.claimName,
        directory: [claim.directory, key.slice(0, slash)].filter(Boolean).join('/'),
        fileName: key.slice(slash + 1),
        endpoints: input.endpoints,
        image: input.image,
      }),
    );
    return { kind: 'started' };
  }
  const phase = pod.status?.phase;
  if (phase !== 'Succeeded' && phase !== 'Failed') return { kind: 'running' };
  const terminated = pod.status?.containerStatuses?.[0]?.state?.terminated;
  const message = terminated?.message ?? terminated?.reason ?? `pod ${name} ${phase}`;
  let outcome: ClaimBackupOutcome;
  if (phase === 'Failed') {
    outcome = { kind: 'failed', message: `pod ${name} failed: ${message.trim()}` };
  } else {
    let parsed: unknown;
    try {
      parsed = JSON.parse(message);
    } catch {
      parsed = undefined;
    }
    outcome = Value.Check(PodResult, parsed)
      ? { kind: 'succeeded', record: parsed }
      : {
          kind: 'failed',
          message: `pod ${name} succeeded without a backup record: ${message.slice(0, 200)}`,
        };
  }
  await client.delete(builtin.pods, name, namespace, { uid: pod.metadata?.uid ?? '' });
  return outcome;
}
