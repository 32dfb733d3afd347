// The short-lived pod that writes a backup into a PersistentVolumeClaim (docs/adr/0302): the
// operator image, the claim mounted at /backup, the cluster's client certificate, restricted Pod
// Security, never restarted. Owned by its EtcdBackup; deleted once its result is recorded, so the
// next backup can mount a ReadWriteOnce claim.
import type { V1Container, V1Pod, V1Volume } from '@kubernetes/client-node';
import { controllerReference, type KubeObject } from '@homeostat/reconcile';
import type { EtcdBackup } from '../../api/etcd-backup-types.ts';
import type { EtcdCluster } from '../../api/etcd-cluster-types.ts';
import { terminationLog } from '../../backup/claim-backup-agent.ts';
import { managedSelector, tlsSecretNames } from '../cluster-names.ts';
import { restrictedContainerSecurity, restrictedPodSecurity } from '../desired-member-pod.ts';

export const claimMountPath = '/backup';
export const clientTlsDir = '/etc/etcd/tls/client';
/** Marks the backup pods (the stand-in kubelet of the tests runs them as the agent). */
export const backupPodLabel = 'etcd.homeostat.dev/backup';

/** `etcd-backup-<uid>`: one pod per EtcdBackup, found again after an operator restart. */
export const claimBackupPodName = (backup: EtcdBackup): string =>
  `etcd-backup-${(backup.metadata?.uid ?? '').slice(0, 13)}`;

export interface ClaimBackupPodInput {
  readonly backup: EtcdBackup;
  readonly cluster: EtcdCluster;
  readonly claimName: string;
  /** Directory in the claim (relative) where the file goes, and the file's name. */
  readonly directory: string;
  readonly fileName: string;
  readonly endpoints: readonly string[];
  readonly image: string;
}

export function claimBackupPod(input: ClaimBackupPodInput): V1Pod {
  const tls = tlsSecretNames(input.cluster);
  return claimAgentPod({
    name: claimBackupPodName(input.backup),
    owner: input.backup,
    label: input.backup.metadata?.name ?? '',
    claimName: input.claimName,
    readOnly: false,
    container: {
      name: 'backup',
      image: input.image,
      args: [
        'backup-to-claim',
        `--endpoints=${input.endpoints.join(',')}`,
        `--directory=${[claimMountPath, input.directory].filter(Boolean).join('/')}`,
        `--name=${input.fileName}`,
        `--result-file=${terminationLog}`,
        ...(tls ? [`--tls-dir=${clientTlsDir}`] : []),
      ],
      resources: { requests: { cpu: '50m', memory: '64Mi' }, limits: { memory: '256Mi' } },
      volumeMounts: tls ? [{ name: 'client-tls', mountPath: clientTlsDir, readOnly: true }] : [],
    },
    volumes: tls ? [{ name: 'client-tls', secret: { secretName: tls.client, defaultMode: 0o440 } }] : [],
  });
}

/**
 * A run-to-completion pod of the operator image (the agent) with a claim mounted at /backup: one
 * that writes a backup into it, or one that checks a backup in it. Restricted Pod Security, never
 * restarted, its answer in its termination message.
 */
export function claimAgentPod(input: {
  readonly name: string;
  readonly owner: KubeObject;
  /** Value of the backup label (what the pod works on). */
  readonly label: string;
  readonly claimName: string;
  readonly readOnly: boolean;
  readonly container: V1Container;
  readonly volumes?: readonly V1Volume[];
}): V1Pod {
  const managed = Object.fromEntries(
    managedSelector.split(',').map((kv) => kv.split('=') as [string, string]),
  );
  const { container } = input;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: input.name,
      namespace: input.owner.metadata?.namespace ?? '',
      labels: { ...managed, [backupPodLabel]: input.label },
      ownerReferences: [controllerReference(input.owner)],
    },
    spec: {
      restartPolicy: 'Never',
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      securityContext: restrictedPodSecurity,
      containers: [
        {
          ...container,
          terminationMessagePolicy: 'FallbackToLogsOnError',
          securityContext: restrictedContainerSecurity,
          volumeMounts: [
            { name: 'backups', mountPath: claimMountPath, ...(input.readOnly ? { readOnly: true } : {}) },
            ...(container.volumeMounts ?? []),
          ],
        },
      ],
      volumes: [
        {
          name: 'backups',
          persistentVolumeClaim: {
            claimName: input.claimName,
            ...(input.readOnly ? { readOnly: true } : {}),
          },
        },
        ...(input.volumes ?? []),
      ],
    },
  };
}
