// The short-lived pod that writes a backup into a PersistentVolumeClaim (docs/adr/0302): the
// operator image, the claim mounted at /backup, the cluster's client certificate, restricted Pod
// Security, never restarted. Owned by its EtcdBackup; deleted once its result is recorded, so the
// next backup can mount a ReadWriteOnce claim.
import type { V1Pod } from '@kubernetes/client-node';
import { controllerReference } from '@homeostat/reconcile';
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
  const managed = Object.fromEntries(
    managedSelector.split(',').map((kv) => kv.split('=') as [string, string]),
  );
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: claimBackupPodName(input.backup),
      namespace: input.backup.metadata?.namespace ?? '',
      labels: { ...managed, [backupPodLabel]: input.backup.metadata?.name ?? '' },
      ownerReferences: [controllerReference(input.backup)],
    },
    spec: {
      restartPolicy: 'Never',
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      securityContext: restrictedPodSecurity,
      containers: [
        {
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
          terminationMessagePolicy: 'FallbackToLogsOnError',
          resources: { requests: { cpu: '50m', memory: '64Mi' }, limits: { memory: '256Mi' } },
          securityContext: restrictedContainerSecurity,
          volumeMounts: [
            { name: 'backups', mountPath: claimMountPath },
            ...(tls ? [{ name: 'client-tls', mountPath: clientTlsDir, readOnly: true }] : []),
          ],
        },
      ],
      volumes: [
        { name: 'backups', persistentVolumeClaim: { claimName: input.claimName } },
        ...(tls ? [{ name: 'client-tls', secret: { secretName: tls.client, defaultMode: 0o440 } }] : []),
      ],
    },
  };
}
