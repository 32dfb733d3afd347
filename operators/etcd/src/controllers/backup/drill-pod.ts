// The pod and claim of a restore drill (ADR 0311): the newest backup is put into a claim of its
// own by the same init containers a restored member runs (the operator image fetches and checks
// the snapshot, the cluster's etcd image runs etcdutl), a single-member etcd starts on it with no
// peers, and a container of the operator image reads its HashKV at the backup's revision and
// leaves it as its termination message. Nothing outside the pod can reach that etcd: it listens
// on the pod's loopback only, and the pod carries no instance label, so no Service, PDB or member
// selector of the cluster picks it (or its claim) up.
import type { V1Container, V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import { controllerReference } from '@homeostat/reconcile';
import type { EtcdCluster } from '../../api/etcd-cluster-types.ts';
import { terminationLog } from '../../backup/claim-backup-agent.ts';
import { managedSelector, nameOf, namespaceOf } from '../cluster-names.ts';
import {
  dataDir,
  dataMountPath,
  etcdBinary,
  restrictedContainerSecurity,
  restrictedPodSecurity,
} from '../desired-member-pod.ts';
import { backupSourceVolume, restoreStepsInto } from './restore-pod.ts';
import type { RestoreSource } from './restore-source.ts';

/** Marks a drill's pod and claim; its value is the cluster's name. */
export const drillLabel = 'etcd.homeostat.dev/drill';
/** The EtcdBackup a drill pod restores. */
export const drillBackupAnnotation = 'etcd.homeostat.dev/drill-backup';

/** One drill per cluster at a time; pod and claim share the name, found again after a restart. */
export const drillName = (cluster: EtcdCluster): string =>
  `etcd-drill-${(cluster.metadata?.uid ?? '').slice(0, 13)}`;

/** The scratch member's name and its addresses: loopback inside the pod, never published. */
export const drillMember = 'drill';
export const drillClientUrl = 'http://127.0.0.1:2379';
export const drillPeerUrl = 'http://127.0.0.1:2380';
/** How long the check waits for the restored etcd to answer (a large database takes a while to open). */
const answerWaitSeconds = 600;

function drillLabels(cluster: EtcdCluster): Record<string, string> {
  // The operator's managed labels (so its label-selected caches see the drill) and the drill's
  // own; never app.kubernetes.io/instance, which every selector of the cluster's members uses.
  const managed = Object.fromEntries(
    managedSelector.split(',').map((kv) => kv.split('=') as [string, string]),
  );
  return { ...managed, 'app.kubernetes.io/component': 'backup-drill', [drillLabel]: nameOf(cluster) };
}

/** The drill's claim: as large as a member's, which holds a snapshot and its restored copy during a restore. */
export function drillClaim(cluster: EtcdCluster): V1PersistentVolumeClaim {
  const { storage } = cluster.spec;
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: {
      name: drillName(cluster),
      namespace: namespaceOf(cluster),
      labels: drillLabels(cluster),
      ownerReferences: [controllerReference(cluster)],
    },
    spec: {
      accessModes: ['ReadWriteOnce'],
      resources: { requests: { storage: storage.size } },
      ...(storage.storageClassName ? { storageClassName: storage.storageClassName } : {}),
    },
  };
}

export interface DrillPodInput {
  readonly cluster: EtcdCluster;
  readonly backupName: string;
  /** The revision whose HashKV the check reads. */
  readonly revision: string;
  readonly source: RestoreSource;
  readonly images: { readonly operator: string; readonly etcd: string };
}

export function drillPod(input: DrillPodInput): V1Pod {
  const { cluster, source, images } = input;
  const secure = (c: V1Container): V1Container => ({ ...c, securityContext: restrictedContainerSecurity });
  const init = restoreStepsInto(
    // A token of its own: the scratch copy is a cluster of one, never a peer of the source.
    { member: drillMember, peerUrl: drillPeerUrl, token: `${drillName(cluster)}-drill` },
    source,
    images,
  );
  const resources = cluster.spec.resources;
  const etcd: V1Container = {
    name: 'etcd',
    image: images.etcd,
    command: [etcdBinary],
    args: [
      `--name=${drillMember}`,
      `--data-dir=${dataDir}`,
      `--listen-client-urls=${drillClientUrl}`,
      `--advertise-client-urls=${drillClientUrl}`,
      `--listen-peer-urls=${drillPeerUrl}`,
      `--initial-advertise-peer-urls=${drillPeerUrl}`,
      `--initial-cluster=${drillMember}=${drillPeerUrl}`,
    ],
    ...(resources ? { resources } : {}),
    volumeMounts: [{ name: 'data', mountPath: dataMountPath }],
  };
  const check: V1Container = {
    name: 'check',
    image: images.operator,
    args: [
      'check-restored-backup',
      `--endpoint=${drillClientUrl}`,
      `--revision=${input.revision}`,
      `--wait-seconds=${answerWaitSeconds}`,
      `--result-file=${terminationLog}`,
    ],
    terminationMessagePolicy: 'FallbackToLogsOnError',
    resources: { requests: { cpu: '50m', memory: '64Mi' }, limits: { memory: '128Mi' } },
  };
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: drillName(cluster),
      namespace: namespaceOf(cluster),
      labels: drillLabels(cluster),
      annotations: { [drillBackupAnnotation]: input.backupName },
      ownerReferences: [controllerReference(cluster)],
    },
    spec: {
      restartPolicy: 'Never',
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      securityContext: restrictedPodSecurity,
      initContainers: init.map((c) => ({
        ...secure(c),
        terminationMessagePolicy: 'FallbackToLogsOnError',
        ...(resources ? { resources } : {}),
      })),
      containers: [secure(etcd), secure(check)],
      volumes: [
        { name: 'data', persistentVolumeClaim: { claimName: drillName(cluster) } },
        ...(source.claim
          ? [
              {
                name: backupSourceVolume,
                persistentVolumeClaim: { claimName: source.claim.claimName, readOnly: true },
              },
            ]
          : []),
      ],
      ...schedulingOf(cluster),
    },
  };
}

/** Where the cluster's members may run, the drill may too (tolerations, node selector). */
function schedulingOf(
  cluster: EtcdCluster,
): Pick<NonNullable<V1Pod['spec']>, 'nodeSelector' | 'tolerations'> {
  const { scheduling } = cluster.spec;
  return {
    ...(scheduling.nodeSelector && Object.keys(scheduling.nodeSelector).length
      ? { nodeSelector: scheduling.nodeSelector }
      : {}),
    ...(scheduling.tolerations?.length ? { tolerations: scheduling.tolerations } : {}),
  };
}
