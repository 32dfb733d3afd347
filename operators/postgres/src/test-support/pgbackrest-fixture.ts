// A pgBackRest repository in a real S3 server (versitygw over TLS) for one PostgreSQL server of a
// PlainPostgresBed: the configuration file the engine renders, and the invocation the engine runs
// the tool with (as the postgres user, the credentials in its environment only).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { S3TestServer } from '@homeostat/testing/s3';
import type { S3Credentials, S3Destination } from '../backup/destination.ts';
import { credentialEnvironment, renderPgBackRestConfig } from '../backup/pgbackrest-config.ts';
import type { PgBackRestInvocation } from '../backup/pgbackrest-cli.ts';
import { archiveCommand } from '../backup/wal-commands.ts';
import type { PlainPostgresBed } from './plain-postgres.ts';

export interface RepositoryFixture {
  readonly destination: S3Destination;
  readonly credentials: S3Credentials;
  readonly invocation: PgBackRestInvocation;
  /** The server settings that archive every finished segment to the repository. */
  readonly archiveSettings: Readonly<Record<string, string>>;
  /** The server's environment: the credentials its archive_command and restore_command need. */
  readonly serverEnv: Readonly<Record<string, string>>;
  /** The same invocation with other credentials (to see what a wrong Secret does). */
  withCredentials(credentials: S3Credentials): PgBackRestInvocation;
}

/** Writes the configuration for `dataDir`'s server (its socket in `socketDir`, its port) and a repository under `prefix`. */
export function pgBackRestRepository(
  bed: PlainPostgresBed,
  s3: S3TestServer,
  options: {
    bucket: string;
    prefix: string;
    stanza: string;
    dataDir: string;
    socketDir: string;
    port: number;
  },
): RepositoryFixture {
  const destination: S3Destination = {
    bucket: options.bucket,
    prefix: options.prefix,
    endpoint: s3.endpoint,
    region: s3.region,
    forcePathStyle: true,
    ...(s3.caFile ? { caFile: s3.caFile } : {}),
  };
  const credentials: S3Credentials = { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey };
  const workDir = bed.directory(`${options.stanza}-pgbackrest`);
  const configFile = join(workDir, 'pgbackrest.conf');
  writeFileSync(
    configFile,
    renderPgBackRestConfig({
      stanza: options.stanza,
      destination,
      workDir,
      instance: {
        dataDir: options.dataDir,
        port: options.port,
        socketDir: options.socketDir,
        user: 'postgres',
      },
    }),
    { mode: 0o600 },
  );
  bed.own(configFile);
  const target = { configFile, stanza: options.stanza };
  const invocation: PgBackRestInvocation = { ...target, credentials, runAs: bed.runAs };
  return {
    destination,
    credentials,
    invocation,
    archiveSettings: { archive_mode: 'on', archive_command: archiveCommand(target), wal_level: 'replica' },
    serverEnv: credentialEnvironment(credentials),
    withCredentials: (other) => ({ ...invocation, credentials: other }),
  };
}
