// A backup in a PersistentVolumeClaim is checked before a cluster is restored from it, as one in a
// bucket is (ADR 0302): the operator cannot mount a claim, so a short-lived pod of its own image
// mounts it read-only and reads the whole file through the sha256 trailer check (and the recorded
// sha256), leaving what it found as its termination message. A refused file is BackupCorrupt and
// nothing else is made; the pod is deleted once its answer is read.
import type { V1Pod } from '@kubernetes/client-node';
import { Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { builtin, type KubeClient } from '@homeostat/reconcile';
import type { EtcdCluster } from '../../api/etcd-cluster-types.ts';
import { terminationLog } from '../../backup/claim-backup-agent.ts';
import type { VerifiedSnapshot } from '../../backup/snapshot-trailer.ts';
import { namespaceOf } from '../cluster-names.ts';
import { claimAgentPod, claimMountPath } from './claim-backup-pod.ts';
import { RestoreRefusal, type ClaimFile, type RestoreSource } from './restore-source.ts';

const Verified = Type.Object({
  sizeBytes: Type.Integer(),
  sha256: Type.String({ pattern: '^[0-9a-f]{64}$' }),
});

/** One verification pod per cluster, found again by name after an operator restart. */
export const claimVerifyPodName = (cluster: EtcdCluster): string =>
  `etcd-verify-${(cluster.metadata?.uid ?? '').slice(0, 13)}`;

function claimVerifyPod(
  cluster: EtcdCluster,
  claim: ClaimFile,
  sha256: string | undefined,
  image: string,
): V1Pod {
  return claimAgentPod({
    name: claimVerifyPodName(cluster),
    owner: cluster,
    label: cluster.metadata?.name ?? '',
    claimName: claim.claimName,
    readOnly: true,
    container: {
      name: 'verify',
      image,
      args: [
        'verify-claim-backup',
        `--file=${claimMountPath}/${claim.path}`,
        ...(sha256 ? [`--sha256=${sha256}`] : []),
        `--result-file=${terminationLog}`,
      ],
      resources: { requests: { cpu: '50m', memory: '64Mi' }, limits: { memory: '128Mi' } },
    },
  });
}

/**
 * The claim backup's verification: undefined while its pod runs (made if missing), the file's size
 * and sha256 once it checked. Throws RestoreRefusal when the file is refused.
 */
export async function verifyClaimBackup(input: {
  readonly cluster: EtcdCluster;
  readonly source: RestoreSource & { readonly claim: ClaimFile };
  readonly image: string;
  readonly client: KubeClient;
}): Promise<VerifiedSnapshot | undefined> {
  const { cluster, source, client } = input;
  const name = claimVerifyPodName(cluster);
  const namespace = namespaceOf(cluster);
  const pod = await client.find(builtin.pods, name, namespace);
  if (!pod) {
    await client.create(builtin.pods, claimVerifyPod(cluster, source.claim, source.sha256, input.image));
    return undefined;
  }
  // One check pod per cluster: one left checking another file (a recovery that moved on to an
  // older backup, an operator stopped mid-check) is replaced rather than believed.
  const file = `--file=${claimMountPath}/${source.claim.path}`;
  if (!pod.spec?.containers[0]?.args?.includes(file)) {
    await client.delete(builtin.pods, name, namespace, { uid: pod.metadata?.uid ?? '' });
    return undefined;
  }
  const phase = pod.status?.phase;
  if (phase !== 'Succeeded' && phase !== 'Failed') return undefined;
  const terminated = pod.status?.containerStatuses?.[0]?.state?.terminated;
  const message = (terminated?.message ?? terminated?.reason ?? `pod ${name} ${phase}`).trim();
  await client.delete(builtin.pods, name, namespace, { uid: pod.metadata?.uid ?? '' });
  let parsed: unknown;
  try {
    parsed = phase === 'Succeeded' ? JSON.parse(message) : undefined;
  } catch {
    parsed = undefined;
  }
  if (!Value.Check(Verified, parsed)) {
    // A file that cannot be read may appear (a claim still binding); one that reads wrong will not.
    const unreadable = /cannot read|ENOENT/.test(message);
    throw new RestoreRefusal(
      unreadable ? 'BackupUnreadable' : 'BackupCorrupt',
      `${source.describe}: ${message.slice(-600)}`,
      !unreadable,
    );
  }
  return parsed;
}
