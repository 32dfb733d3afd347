// The pod and the claim of one restore drill (ADR 0218): the cluster's image running
// `homeostat-instance drill` on a claim of its own (the size and class of the cluster's), which
// restores one backup of the cluster's repository (the one drillTarget picks) and the WAL archived
// after it, replays it in a private server, checks it and answers in its termination message. It
// reads the repository with the cluster's own credentials (as the entrypoint's recovery source,
// repo2) and reaches nothing else: no Service selects it (no cluster label), no instance hears
// from it, and its server neither listens on TCP nor archives.
import type { V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import { controllerReference } from '@homeostat/reconcile';
import { operatorUser } from '../../api/operator-roles.ts';
import type { BackupSpecFields, PostgresCluster } from '../../api/postgres-cluster-types.ts';
import { postgresPort } from '../cluster-names.ts';
import { stanzaOf } from '../desired-backup.ts';
import {
  entrypointInImage,
  instancePaths,
  postgresPodSecurity,
  restrictedContainerSecurity,
} from '../desired-pod.ts';
import { restorePodParts } from '../desired-recovery.ts';
import { operatorName } from '../operand-labels.ts';
import { rowCountQuery } from '../../instance/row-counts.ts';
import { sourceCountsAnnotation } from './compare-counts.ts';
import type { SourceCounts } from './source-counts.ts';

/** On a drill's pod: the PostgreSQLBackup it restores (its result is recorded there too). */
export const drilledBackupAnnotation = 'postgres.homeostat.dev/drilled-backup';

/** Marks a drill's pod and claim; its value is the cluster's name (what wakes it). */
export const drillLabel = 'postgres.homeostat.dev/restore-drill';
/** The informers' selector: only the drill pods and claims this operator made. */
export const drillSelector = `app.kubernetes.io/managed-by=${operatorName},${drillLabel}`;

/**
 * `<cluster>-drill-<yyyymmddhhmmss>`, the drill's pod and its claim: one name per drill, so a claim
 * still being deleted (its protection finalizer waits for the pod to go) never holds up the next.
 */
export const drillName = (cluster: string, startedAt: Date): string =>
  `${cluster}-drill-${startedAt.toISOString().replace(/[-:T]/g, '').slice(0, 14)}`;

function drillMeta(cluster: PostgresCluster, drill: string) {
  const name = cluster.metadata?.name ?? '';
  return {
    name: drill,
    namespace: cluster.metadata?.namespace ?? 'default',
    labels: {
      'app.kubernetes.io/name': 'postgresql',
      'app.kubernetes.io/instance': name,
      'app.kubernetes.io/component': 'restore-drill',
      'app.kubernetes.io/part-of': 'homeostat',
      'app.kubernetes.io/managed-by': operatorName,
      [drillLabel]: name,
    },
    ownerReferences: [controllerReference(cluster)],
  };
}

/** The drill's claim: as large as an instance's, in the same class (the copy is the same size). */
export function drillClaim(cluster: PostgresCluster, drill: string): V1PersistentVolumeClaim {
  const { size, storageClassName } = cluster.spec.storage;
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: drillMeta(cluster, drill),
    spec: {
      accessModes: ['ReadWriteOnce'],
      resources: { requests: { storage: size } },
      ...(storageClassName ? { storageClassName } : {}),
    },
  };
}

/**
 * The drill's pod, restoring the backup of pgBackRest label `label`, PostgreSQLBackup `backupName`.
 * With the source counted at L, the pod first stops its replay just before L and counts there with
 * the operator's query (ADR 0221); the source's counts stay on the pod, for the comparison.
 */
export function drillPod(
  cluster: PostgresCluster,
  drill: string,
  backup: BackupSpecFields,
  image: string,
  restored: { readonly backupName: string; readonly label: string },
  source: SourceCounts,
): V1Pod {
  const meta = drillMeta(cluster, drill);
  const restore = restorePodParts(
    { stanza: stanzaOf(cluster), s3: backup.destination.s3, backup: restored.label },
    { pgdata: instancePaths.pgdata, run: instancePaths.run },
  );
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      ...meta,
      annotations: {
        [drilledBackupAnnotation]: restored.backupName,
        [sourceCountsAnnotation]: JSON.stringify(source),
      },
    },
    spec: {
      restartPolicy: 'Never',
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      securityContext: postgresPodSecurity,
      ...(cluster.spec.scheduling.nodeSelector && Object.keys(cluster.spec.scheduling.nodeSelector).length
        ? { nodeSelector: cluster.spec.scheduling.nodeSelector }
        : {}),
      containers: [
        {
          name: 'drill',
          image,
          command: [entrypointInImage, 'drill'],
          terminationMessagePath: '/dev/termination-log',
          terminationMessagePolicy: 'File',
          env: [
            { name: 'PGDATA', value: instancePaths.pgdata },
            { name: 'PGPORT', value: String(postgresPort) },
            { name: 'PG_BIN', value: `/usr/lib/postgresql/${cluster.spec.postgresVersion}/bin` },
            { name: 'PG_RUN_DIR', value: instancePaths.run },
            // The operator's role, which every cluster of this operator has: the drill's checks
            // connect as it through the private server's socket.
            { name: 'PG_DRILL_USER', value: operatorUser },
            // How the copy counts its databases (the source's way), at L when the source was counted.
            { name: 'PG_DRILL_COUNT_SQL', value: rowCountQuery },
            ...(source.compared ? [{ name: 'PG_DRILL_COUNT_LSN', value: source.lsn }] : []),
            ...restore.env,
          ],
          resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { memory: '1Gi' } },
          securityContext: restrictedContainerSecurity,
          volumeMounts: [
            { name: 'data', mountPath: instancePaths.volume },
            { name: 'run', mountPath: instancePaths.run },
            { name: 'tmp', mountPath: '/tmp' },
            ...restore.mounts,
          ],
        },
      ],
      volumes: [
        { name: 'data', persistentVolumeClaim: { claimName: meta.name } },
        { name: 'run', emptyDir: {} },
        { name: 'tmp', emptyDir: {} },
        ...restore.volumes,
      ],
    },
  };
}
