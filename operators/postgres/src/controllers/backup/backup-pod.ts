// The short-lived pod that takes one PostgreSQLBackup (ADR 0215): the cluster's own image running
// `homeostat-instance backup`, pgBackRest as the repository host. It reads the files over TLS
// from the pgBackRest servers of the cluster's instances (a standby's when one streams), with the
// client certificate of <cluster>-backup-client, and writes to the repository with the
// credentials the kubelet takes from the user's Secret. Never restarted; its termination message
// is the backup's record or why it failed. It carries no cluster label, so no Service, budget or
// scale count of the cluster ever selects it.
import type { V1EnvVar, V1Pod } from '@kubernetes/client-node';
import { controllerReference, type KubeObject } from '@homeostat/reconcile';
import { operatorUser } from '../../api/operator-roles.ts';
import type { PostgresBackup } from '../../api/postgres-backup-types.ts';
import type { BackupSpecFields, PostgresCluster } from '../../api/postgres-cluster-types.ts';
import { renderRepositoryHostConfig } from '../../backup/pgbackrest-config.ts';
import { instanceHost, postgresPort, tlsSecretNames } from '../cluster-names.ts';
import { backupServerPort, repositoryAccessParts, s3DestinationOf, stanzaOf } from '../desired-backup.ts';
import {
  entrypointInImage,
  instancePaths,
  postgresPodSecurity,
  restrictedContainerSecurity,
} from '../desired-pod.ts';
import { operatorName } from '../operand-labels.ts';

/** Marks a backup pod; its value is the PostgreSQLBackup's name (what wakes it). */
export const backupPodLabel = 'postgres.homeostat.dev/backup';
/** The informer's selector: only the backup pods this operator made. */
export const backupPodSelector = `app.kubernetes.io/managed-by=${operatorName},${backupPodLabel}`;

/** Where the backup pod keeps its configuration and the client certificate. */
export const backupPodPaths = { work: '/tmp/pgbackrest', clientTls: '/etc/homeostat/backup-client' } as const;

/** `postgres-backup-<uid>`: one pod per PostgreSQLBackup, found again after an operator restart. */
export const backupPodName = (backup: PostgresBackup): string =>
  `postgres-backup-${(backup.metadata?.uid ?? '').slice(0, 13)}`;

export interface BackupPodInput {
  readonly backup: PostgresBackup;
  readonly cluster: PostgresCluster;
  readonly backupSpec: BackupSpecFields;
  readonly image: string;
  /** The instances to name as pgBackRest hosts (the primary among them; the tool finds which). */
  readonly instances: readonly string[];
  readonly fromStandby: boolean;
}

export function desiredBackupPod(input: BackupPodInput): V1Pod {
  const { backup, cluster } = input;
  const clusterName = cluster.metadata?.name ?? '';
  const namespace = cluster.metadata?.namespace ?? 'default';
  const { s3 } = input.backupSpec.destination;
  const configFile = `${backupPodPaths.work}/pgbackrest.conf`;
  const config = renderRepositoryHostConfig({
    stanza: stanzaOf(cluster),
    destination: s3DestinationOf(s3),
    workDir: backupPodPaths.work,
    instances: input.instances.map((instance) => ({
      host: instanceHost(clusterName, namespace, instance),
      dataDir: instancePaths.pgdata,
      port: postgresPort,
      socketDir: instancePaths.run,
      user: operatorUser,
    })),
    client: {
      certFile: `${backupPodPaths.clientTls}/tls.crt`,
      keyFile: `${backupPodPaths.clientTls}/tls.key`,
      caFile: `${backupPodPaths.clientTls}/ca.crt`,
    },
    serverPort: backupServerPort,
    fromStandby: input.fromStandby,
  });
  return repositoryToolPod({
    name: backupPodName(backup),
    namespace,
    clusterName,
    s3,
    image: input.image,
    command: 'backup',
    owner: backup,
    labels: { 'app.kubernetes.io/component': 'backup', [backupPodLabel]: backup.metadata?.name ?? '' },
    env: [
      { name: 'PG_BACKREST_CONFIG', value: config },
      { name: 'PG_BACKREST_CONFIG_FILE', value: configFile },
      { name: 'PG_BACKREST_STANZA', value: stanzaOf(cluster) },
    ],
    clientTls: tlsSecretNames(clusterName).backupClient,
  });
}

/** What differs between the pods that work on a cluster's repository (a backup, an expire). */
export interface RepositoryToolPodInput {
  readonly name: string;
  readonly namespace: string;
  readonly clusterName: string;
  readonly s3: BackupSpecFields['destination']['s3'];
  readonly image: string;
  /** The entrypoint's subcommand. */
  readonly command: 'backup' | 'expire';
  /** The object the pod belongs to (deleted with it). */
  readonly owner: KubeObject;
  readonly labels: Readonly<Record<string, string>>;
  readonly env: readonly V1EnvVar[];
  /** The Secret of the backup client certificate, for a pod that reaches the instances. */
  readonly clientTls?: string;
}

/**
 * A pod of the cluster's image running one pgBackRest job on the repository, with the credentials
 * the kubelet takes from the user's Secret. Never restarted: its termination message is its answer.
 */
export function repositoryToolPod(input: RepositoryToolPodInput): V1Pod {
  const access = repositoryAccessParts(input.s3);
  const tls = input.clientTls;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: input.name,
      namespace: input.namespace,
      labels: {
        'app.kubernetes.io/name': 'postgresql',
        'app.kubernetes.io/instance': input.clusterName,
        'app.kubernetes.io/part-of': 'homeostat',
        'app.kubernetes.io/managed-by': operatorName,
        ...input.labels,
      },
      ownerReferences: [controllerReference(input.owner)],
    },
    spec: {
      restartPolicy: 'Never',
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      securityContext: postgresPodSecurity,
      containers: [
        {
          name: input.command,
          image: input.image,
          command: [entrypointInImage, input.command],
          // The entrypoint writes the record or the redacted reason here; never a log's tail.
          terminationMessagePath: '/dev/termination-log',
          terminationMessagePolicy: 'File',
          env: [...input.env, ...access.env],
          resources: { requests: { cpu: '100m', memory: '64Mi' }, limits: { memory: '512Mi' } },
          securityContext: restrictedContainerSecurity,
          volumeMounts: [
            { name: 'tmp', mountPath: '/tmp' },
            ...(tls ? [{ name: 'client-tls', mountPath: backupPodPaths.clientTls, readOnly: true }] : []),
            ...access.mounts,
          ],
        },
      ],
      volumes: [
        { name: 'tmp', emptyDir: {} },
        ...(tls
          ? [
              {
                name: 'client-tls',
                // 0440, root's with the pod's group: pgBackRest takes a key file owned by root only so.
                secret: { secretName: tls, defaultMode: 0o440 },
              },
            ]
          : []),
        ...access.volumes,
      ],
    },
  };
}
