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

/** The configuration file's text (no credentials in it). */
export function renderPgBackRestConfig(settings: PgBackRestSettings): string {
  const { destination, instance } = settings;
  const endpoint = s3Endpoint(destination);
  const global = [
    line('repo1-type', 's3'),
    line('repo1-s3-endpoint', endpoint.host),
    line('repo1-storage-port', endpoint.port),
    line('repo1-s3-bucket', destination.bucket),
    line('repo1-s3-region', destination.region),
    line('repo1-s3-uri-style', destination.forcePathStyle ? 'path' : 'host'),
    line('repo1-path', repositoryPath(destination)),
    ...(destination.caFile ? [line('repo1-storage-ca-file', destination.caFile)] : []),
    // Retention is decided by this layer (retention.ts) and applied backup by backup; the tool's
    // own count is set to its maximum so that it never expires anything on its own.
    line('repo1-retention-full-type', 'count'),
    line('repo1-retention-full', 9999999),
    // zstd: a fraction of gzip's CPU for a similar ratio (docs/benchmarks.md).
    line('compress-type', 'zst'),
    line('start-fast', 'y'),
    line('lock-path', `${settings.workDir}/lock`),
    line('spool-path', `${settings.workDir}/spool`),
    // The caller surfaces what the tool prints (redacted); no log file in the pod's filesystem.
    line('log-level-file', 'off'),
    line('log-level-console', settings.consoleLog ?? 'warn'),
    line('log-level-stderr', 'off'),
  ];
  const stanza = [
    line('pg1-path', instance.dataDir),
    line('pg1-port', instance.port),
    line('pg1-socket-path', instance.socketDir),
    line('pg1-user', instance.user),
  ];
  return [`[global]`, ...global, '', `[${settings.stanza}]`, ...stanza, ''].join('\n');
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
