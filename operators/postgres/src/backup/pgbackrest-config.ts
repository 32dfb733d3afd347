// pgBackRest's configuration for one cluster's repository (ADR 0212): one stanza per cluster, the
// repository in an S3-compatible bucket. The file holds no secret; the credentials reach the tool
// through the environment or a second file in its include path, mounted from the Secret, so
// neither a process listing nor this file shows them.
import type { S3Credentials, S3Destination } from './destination.ts';

/** Where the instance's data directory is and how the tool reaches its server (a local socket). */
export interface PgBackRestInstance {
  readonly dataDir: string;
  readonly port: number;
  readonly socketDir: string;
  /** The role the tool connects as (a superuser, through the socket). */
  readonly user: string;
}

/** Everything the configuration file is rendered from. */
export interface PgBackRestSettings {
  readonly stanza: string;
  readonly destination: S3Destination;
  readonly instance: PgBackRestInstance;
  /** A directory the tool may write its locks and spool into (the pod's own, never the volume's data). */
  readonly workDir: string;
  /**
   * What the tool prints on its console: `warn` (the default) for a caller that captures and
   * redacts it (runPgBackRest); `off` where nothing would redact it, as for the archive_command a
   * server runs, whose output goes to the server's log unfiltered (pgBackRest quotes the S3
   * server's error body, access key id included).
   */
  readonly consoleLog?: 'warn' | 'off';
  /**
   * pgBackRest's TLS server on this instance (`pgbackrest server`), through which a backup pod
   * reads the data directory and asks the server to start and stop a backup (ADR 0215). Unset:
   * no server, so no base backup can be taken of this instance.
   */
  readonly tlsServer?: PgBackRestTlsServer;
}

/** The TLS server of an instance: its certificate and key, the CA its clients' certificates come from. */
export interface PgBackRestTlsServer {
  readonly address: string;
  readonly port: number;
  readonly certFile: string;
  readonly keyFile: string;
  readonly caFile: string;
  /** The only client it serves: a certificate of this CA with this common name, for this stanza alone. */
  readonly clientCommonName: string;
}

/** How a backup pod reaches the pgBackRest server of one instance, and that instance's server. */
export interface RemoteInstance extends PgBackRestInstance {
  /** The instance's DNS name, which its serving certificate holds. */
  readonly host: string;
}

/** Everything a backup pod's configuration (pgBackRest's "repository host") is rendered from. */
export interface RepositoryHostSettings {
  readonly stanza: string;
  readonly destination: S3Destination;
  readonly workDir: string;
  /** Every instance; pgBackRest finds the primary among them itself and skips one it cannot reach. */
  readonly instances: readonly RemoteInstance[];
  /** The client certificate the instances' servers accept, and the CA their certificate is from. */
  readonly client: { readonly certFile: string; readonly keyFile: string; readonly caFile: string };
  readonly serverPort: number;
  /**
   * Copy the files from a standby (pgBackRest's backup-standby): the primary only starts and
   * stops the backup, so its disks and network carry nothing more. The tool then needs a standby
   * that streams; the operator sets this only when one does.
   */
  readonly fromStandby: boolean;
}

/** pgBackRest's option names for the credentials; as environment variables they take its PGBACKREST_ prefix. */
const credentialOptions = {
  accessKeyId: 'repo1-s3-key',
  secretAccessKey: 'repo1-s3-key-secret',
  sessionToken: 'repo1-s3-token',
} as const;

/** pgBackRest reads an option `a-b` from the variable `PGBACKREST_A_B`. */
const envName = (option: string) => `PGBACKREST_${option.toUpperCase().replaceAll('-', '_')}`;

/** The host and port of an https endpoint; pgBackRest speaks S3 over TLS only, so http is refused here. */
export function s3Endpoint(destination: S3Destination): { host: string; port: number } {
  if (destination.endpoint === undefined) {
    return { host: `s3.${destination.region}.amazonaws.com`, port: 443 };
  }
  const url = new URL(destination.endpoint);
  if (url.protocol !== 'https:') {
    throw new Error(
      `the backup destination's endpoint ${destination.endpoint} is not https: pgBackRest reaches S3 over TLS only`,
    );
  }
  return { host: url.hostname, port: url.port === '' ? 443 : Number(url.port) };
}

/** The repository's path in the bucket: the prefix as an absolute path, "/" for none. */
export function repositoryPath(destination: S3Destination): string {
  const trimmed = (destination.prefix ?? '').replace(/\/+$/, '');
  return `/${trimmed}`;
}

function line(option: string, value: string | number): string {
  const text = String(value);
  // One option per line: a newline in a value would smuggle in another option.
  if (/[\r\n]/.test(text)) throw new Error(`pgBackRest option ${option} must not contain a line break`);
  return `${option}=${text}`;
}

/**
 * The repository and the tool's own settings, which every configuration shares. `repo` is the
 * repository's index: 1 for the cluster's own; 2 for the one a new cluster is recovered from,
 * whose credentials then come from the PGBACKREST_REPO2_* variables and never mix with its own.
 */
function repositoryLines(
  destination: S3Destination,
  workDir: string,
  consoleLog: 'warn' | 'off' | 'info',
  repo: 1 | 2 = 1,
): string[] {
  const endpoint = s3Endpoint(destination);
  const r = `repo${repo}`;
  return [
    line(`${r}-type`, 's3'),
    line(`${r}-s3-endpoint`, endpoint.host),
    line(`${r}-storage-port`, endpoint.port),
    line(`${r}-s3-bucket`, destination.bucket),
    line(`${r}-s3-region`, destination.region),
    line(`${r}-s3-uri-style`, destination.forcePathStyle ? 'path' : 'host'),
    line(`${r}-path`, repositoryPath(destination)),
    ...(destination.caFile ? [line(`${r}-storage-ca-file`, destination.caFile)] : []),
    // Retention is decided by this layer (retention.ts) and applied backup by backup; the tool's
    // own count is set to its maximum so that it never expires anything on its own.
    line(`${r}-retention-full-type`, 'count'),
    line(`${r}-retention-full`, 9999999),
    // zstd: a fraction of gzip's CPU for a similar ratio (docs/benchmarks.md). Level 1, not the
    // tool's 3: on the bench's 1 GB cluster it stores about 1% more for a fifth less CPU, and the
    // compression is most of a backup's CPU (ADR 0219). WAL pushed by archive_command too.
    line('compress-type', 'zst'),
    line('compress-level', 1),
    // Files under 2 MiB (most of a cluster's files, by count) go into shared objects of up to
    // 20 MiB instead of one PUT each: on an object store the requests, not the bytes, are what a
    // small cluster's backup waits on (ADR 0219). Only backups use it; restores read either form.
    line(`${r}-bundle`, 'y'),
    line('start-fast', 'y'),
    line('lock-path', `${workDir}/lock`),
    line('spool-path', `${workDir}/spool`),
    // The caller surfaces what the tool prints (redacted); no log file in the pod's filesystem.
    line('log-level-file', 'off'),
    line('log-level-console', consoleLog),
    line('log-level-stderr', 'off'),
  ];
}

function tlsServerLines(stanza: string, server: PgBackRestTlsServer | undefined): string[] {
  if (!server) return [];
  if (!/^[-a-zA-Z0-9_.@]+$/.test(server.clientCommonName)) {
    throw new Error(`the backup client's common name '${server.clientCommonName}' is not a plain name`);
  }
  return [
    line('tls-server-address', server.address),
    line('tls-server-port', server.port),
    line('tls-server-cert-file', server.certFile),
    line('tls-server-key-file', server.keyFile),
    line('tls-server-ca-file', server.caFile),
    // Only the backup pod's certificate, and only for this cluster's stanza.
    line('tls-server-auth', `${server.clientCommonName}=${stanza}`),
  ];
}

/** The configuration file's text (no credentials in it). */
export function renderPgBackRestConfig(settings: PgBackRestSettings): string {
  const { destination, instance } = settings;
  const global = [
    ...repositoryLines(destination, settings.workDir, settings.consoleLog ?? 'warn'),
    ...tlsServerLines(settings.stanza, settings.tlsServer),
  ];
  const stanza = [
    line('pg1-path', instance.dataDir),
    line('pg1-port', instance.port),
    line('pg1-socket-path', instance.socketDir),
    line('pg1-user', instance.user),
  ];
  return [`[global]`, ...global, '', `[${settings.stanza}]`, ...stanza, ''].join('\n');
}

/** Everything the configuration of a pod that only works on the repository (expire, info) needs. */
export interface RepositoryOnlySettings {
  readonly destination: S3Destination;
  readonly workDir: string;
}

/**
 * The configuration of a pod that expires backups: the repository and nothing of the instances,
 * since expiring reads and deletes only what is in the bucket.
 */
export function renderRepositoryOnlyConfig(settings: RepositoryOnlySettings): string {
  // No stanza section: the stanza is named on the command line, and it has no options of its own here.
  return ['[global]', ...repositoryLines(settings.destination, settings.workDir, 'info'), ''].join('\n');
}

/** Everything the configuration a new cluster is recovered with is rendered from. */
export interface RecoverySourceSettings {
  /** The stanza in the source repository: the name of the cluster the backups were taken of. */
  readonly stanza: string;
  readonly destination: S3Destination;
  readonly workDir: string;
  /** The new instance's data directory, which the restore fills. */
  readonly dataDir: string;
}

/**
 * The configuration a new cluster's first instance restores with, and replays the source's WAL
 * with until it is promoted (spec.bootstrap.recovery): the source repository alone, as repo2, so
 * its credentials (PGBACKREST_REPO2_*) and the cluster's own (PGBACKREST_REPO1_*, for archiving)
 * can sit in the same environment, and nothing the new cluster archives can reach the source.
 */
export function renderRecoveryConfig(settings: RecoverySourceSettings): string {
  return [
    '[global]',
    ...repositoryLines(settings.destination, settings.workDir, 'warn', 2),
    '',
    `[${settings.stanza}]`,
    line('pg1-path', settings.dataDir),
    '',
  ].join('\n');
}

/**
 * The configuration of a backup pod: the repository, and each instance as a pgBackRest host
 * reached over TLS (pgN-host-type=tls) with the cluster's client certificate. It prints what it
 * does (info) for the pod to redact and summarise.
 */
export function renderRepositoryHostConfig(settings: RepositoryHostSettings): string {
  if (settings.instances.length === 0) throw new Error('a backup needs at least one instance to read from');
  const global = [
    ...repositoryLines(settings.destination, settings.workDir, 'info'),
    line('backup-standby', settings.fromStandby ? 'y' : 'n'),
  ];
  const hosts = settings.instances.flatMap((instance, index) => {
    const pg = `pg${index + 1}`;
    return [
      line(`${pg}-host`, instance.host),
      line(`${pg}-host-type`, 'tls'),
      line(`${pg}-host-port`, settings.serverPort),
      line(`${pg}-host-cert-file`, settings.client.certFile),
      line(`${pg}-host-key-file`, settings.client.keyFile),
      line(`${pg}-host-ca-file`, settings.client.caFile),
      line(`${pg}-path`, instance.dataDir),
      line(`${pg}-port`, instance.port),
      line(`${pg}-socket-path`, instance.socketDir),
      line(`${pg}-user`, instance.user),
    ];
  });
  return [`[global]`, ...global, '', `[${settings.stanza}]`, ...hosts, ''].join('\n');
}

/** The credentials as environment variables for the tool (and for the server whose archive_command runs it). */
export function credentialEnvironment(credentials: S3Credentials): Record<string, string> {
  const env: Record<string, string> = {
    [envName(credentialOptions.accessKeyId)]: credentials.accessKeyId,
    [envName(credentialOptions.secretAccessKey)]: credentials.secretAccessKey,
  };
  if (credentials.sessionToken) env[envName(credentialOptions.sessionToken)] = credentials.sessionToken;
  return env;
}

/**
 * The credentials as a configuration file for the tool's include path (`--config-include-path`),
 * the form a pod mounts from a Secret when its environment should not hold them.
 */
export function renderCredentialsConfig(credentials: S3Credentials): string {
  return [
    '[global]',
    line(credentialOptions.accessKeyId, credentials.accessKeyId),
    line(credentialOptions.secretAccessKey, credentials.secretAccessKey),
    ...(credentials.sessionToken ? [line(credentialOptions.sessionToken, credentials.sessionToken)] : []),
    '',
  ].join('\n');
}
