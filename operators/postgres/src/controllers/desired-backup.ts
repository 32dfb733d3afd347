// What an instance pod needs to archive its WAL with pgBackRest when spec.backup is set (ADR 0213):
// the tool's configuration as an environment variable the entrypoint writes to a file in the pod's
// run directory (it holds no secret, and a change of it changes the pod spec's hash, so the pods
// restart with it and create the stanza of a new destination), archive_command and archive_timeout
// for the entrypoint's operator-owned settings, the credentials as environment variables taken by
// the kubelet straight from the user's Secret (the operator never reads them), and the CA mounted.
// With it, pgBackRest's TLS server, through which a PostgreSQLBackup's pod reads the instance's
// files (ADR 0215), serving under the instance's certificate to the cluster's backup client alone.
import type { V1ContainerPort, V1EnvVar, V1Volume, V1VolumeMount } from '@kubernetes/client-node';
import { s3CredentialKeys } from '@homeostat/operator-kit/api';
import { operatorUser } from '../api/operator-roles.ts';
import type { BackupSpecFields, PostgresCluster } from '../api/postgres-cluster-types.ts';
import type { S3Destination } from '../backup/destination.ts';
import { renderPgBackRestConfig } from '../backup/pgbackrest-config.ts';
import { archiveCommand } from '../backup/wal-commands.ts';

/** Where an instance pod keeps what archiving needs. */
export interface BackupPodPaths {
  readonly pgdata: string;
  /** The pod's run directory (an emptyDir): the tool's configuration, locks and spool go under it. */
  readonly run: string;
  readonly port: number;
  /** The instance's serving certificate, key and CA (PG_TLS_DIR). */
  readonly tls: string;
}

/** The port of pgBackRest's TLS server on each instance (pgBackRest's default). */
export const backupServerPort = 8432;
/** The common name of the backup pods' client certificate: the only client the servers accept. */
export const backupClientCommonName = 'homeostat-backup';

/** Where the CA Secret is mounted in the postgres container. */
export const backupCaMountPath = '/etc/homeostat/backup-ca';

/** The pgBackRest stanza of a cluster: one per cluster, named after it. */
export const stanzaOf = (cluster: PostgresCluster): string => cluster.metadata?.name ?? '';

/** archiveTimeout (e.g. 5m) in seconds: PostgreSQL spells minutes `min`, so it gets a plain number. */
export function archiveTimeoutSeconds(archiveTimeout: string): number {
  const match = /^([0-9]{1,4})(s|m|h)$/.exec(archiveTimeout);
  if (!match) throw new Error(`backup.archiveTimeout '${archiveTimeout}' is not a number of s, m or h`);
  const seconds: Readonly<Record<string, number>> = { s: 1, m: 60, h: 3600 };
  return Number(match[1]) * (seconds[match[2] ?? 's'] ?? 1);
}

/** pgBackRest's option variables for the credentials of repository `repo`, each from its key in the user's Secret. */
const credentialVariables = (repo: 1 | 2) =>
  [
    { name: `PGBACKREST_REPO${repo}_S3_KEY`, key: s3CredentialKeys.accessKeyId, optional: false },
    { name: `PGBACKREST_REPO${repo}_S3_KEY_SECRET`, key: s3CredentialKeys.secretAccessKey, optional: false },
    { name: `PGBACKREST_REPO${repo}_S3_TOKEN`, key: s3CredentialKeys.sessionToken, optional: true },
  ] as const;

type S3Spec = BackupSpecFields['destination']['s3'];

/**
 * How a pod reaches one repository: pgBackRest's index for it (1: the cluster's own; 2: the one a
 * new cluster is recovered from), and the volume and path of its CA.
 */
export interface RepositoryAccess {
  readonly repo: 1 | 2;
  readonly caVolume: string;
  readonly caMountPath: string;
}

/** The cluster's own repository (archiving and base backups). */
export const ownRepository: RepositoryAccess = {
  repo: 1,
  caVolume: 'backup-ca',
  caMountPath: backupCaMountPath,
};

/** The destination as pgBackRest's configuration takes it (the CA where the pod mounts it). */
export function s3DestinationOf(s3: S3Spec, access: RepositoryAccess = ownRepository): S3Destination {
  return {
    bucket: s3.bucket,
    ...(s3.prefix !== undefined ? { prefix: s3.prefix } : {}),
    ...(s3.endpoint !== undefined ? { endpoint: s3.endpoint } : {}),
    region: s3.region,
    forcePathStyle: s3.forcePathStyle,
    ...(s3.ca ? { caFile: `${access.caMountPath}/${s3.ca.key}` } : {}),
  };
}

/** What every pod that reaches a repository needs: the credentials (read by the kubelet) and the CA. */
export function repositoryAccessParts(
  s3: S3Spec,
  access: RepositoryAccess = ownRepository,
): {
  env: V1EnvVar[];
  volumes: V1Volume[];
  mounts: V1VolumeMount[];
} {
  const env = credentialVariables(access.repo).map(({ name, key, optional }) => ({
    name,
    valueFrom: { secretKeyRef: { name: s3.credentialsSecretName, key, ...(optional ? { optional } : {}) } },
  }));
  if (!s3.ca) return { env, volumes: [], mounts: [] };
  return {
    env,
    volumes: [
      {
        name: access.caVolume,
        secret: {
          secretName: s3.ca.secretName,
          defaultMode: 0o444,
          items: [{ key: s3.ca.key, path: s3.ca.key }],
        },
      },
    ],
    mounts: [{ name: access.caVolume, mountPath: access.caMountPath, readOnly: true }],
  };
}

/** The postgres container's environment, volume and mount for archiving; nothing when backup is unset. */
export function backupPodParts(
  cluster: PostgresCluster,
  paths: BackupPodPaths,
): { env: V1EnvVar[]; volumes: V1Volume[]; mounts: V1VolumeMount[]; ports: V1ContainerPort[] } {
  const backup: BackupSpecFields | undefined = cluster.spec.backup;
  if (!backup) return { env: [], volumes: [], mounts: [], ports: [] };
  const { s3 } = backup.destination;
  const workDir = `${paths.run}/pgbackrest`;
  const configFile = `${workDir}/pgbackrest.conf`;
  const stanza = stanzaOf(cluster);
  const config = renderPgBackRestConfig({
    stanza,
    destination: s3DestinationOf(s3),
    instance: { dataDir: paths.pgdata, port: paths.port, socketDir: paths.run, user: operatorUser },
    workDir,
    // The server runs archive_command with its own output going to its log, unredacted: the tool
    // prints nothing there. A failure shows in pg_stat_archiver, which the operator reports.
    consoleLog: 'off',
    tlsServer: {
      address: '0.0.0.0',
      port: backupServerPort,
      certFile: `${paths.tls}/tls.crt`,
      keyFile: `${paths.tls}/tls.key`,
      caFile: `${paths.tls}/ca.crt`,
      clientCommonName: backupClientCommonName,
    },
  });
  const access = repositoryAccessParts(s3);
  return {
    env: [
      { name: 'PG_BACKREST_CONFIG', value: config },
      { name: 'PG_BACKREST_CONFIG_FILE', value: configFile },
      { name: 'PG_BACKREST_STANZA', value: stanza },
      { name: 'PG_ARCHIVE_COMMAND', value: archiveCommand({ configFile, stanza }) },
      { name: 'PG_ARCHIVE_TIMEOUT', value: String(archiveTimeoutSeconds(backup.archiveTimeout)) },
      ...access.env,
    ],
    volumes: access.volumes,
    mounts: access.mounts,
    ports: [{ name: 'pgbackrest', containerPort: backupServerPort, protocol: 'TCP' }],
  };
}
