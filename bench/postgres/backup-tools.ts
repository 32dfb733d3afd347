// The two backup tools the PostgreSQL operator could ship (ADR 0212), behind one shape so the
// benchmark drives both the same way: the archive_command to turn on, a base backup, the backup's
// files into an empty data directory, and the restore_command a recovering server runs. pgBackRest
// goes through the operator's own engine (src/backup); Barman Cloud through its commands.
import { execFile } from 'node:child_process';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  createTestCa,
  freeLoopbackPort,
  issueTestCertificate,
  logTail,
  startProcess,
  waitUntil,
  type ManagedProcess,
} from '@homeostat/testing';
import type { S3TestServer } from '@homeostat/testing/s3';
import { ensureStanza, takeBaseBackup } from '../../operators/postgres/src/backup/base-backup.ts';
import {
  credentialEnvironment,
  renderPgBackRestConfig,
  renderRepositoryHostConfig,
} from '../../operators/postgres/src/backup/pgbackrest-config.ts';
import {
  runPgBackRest,
  type PgBackRestInvocation,
} from '../../operators/postgres/src/backup/pgbackrest-cli.ts';
import { readRepository } from '../../operators/postgres/src/backup/repository-info.ts';
import { restoreBackupFiles } from '../../operators/postgres/src/backup/restore.ts';
import { archiveCommand, restoreCommand } from '../../operators/postgres/src/backup/wal-commands.ts';
import { redactToolOutput } from '../../operators/postgres/src/backup/redact.ts';
import type { PlainPostgresBed } from '../../operators/postgres/src/test-support/plain-postgres.ts';

const run = promisify(execFile);

/** Where the primary lives, known before it starts (the tool's configuration names it). */
export interface Primary {
  readonly dataDir: string;
  readonly port: number;
  readonly socketDir: string;
}

export interface BackupTool {
  readonly name: 'pgbackrest' | 'barman-cloud';
  readonly version: string;
  /** Where, under the bucket, its base backups and its WAL are (to count bytes stored). */
  readonly backupPrefix: string;
  readonly walPrefix: string;
  /** The server's environment: what archive_command and restore_command need (credentials included). */
  readonly serverEnv: Readonly<Record<string, string>>;
  readonly archiveCommand: string;
  /** Anything the repository needs before the first segment arrives. */
  prepare(): Promise<void>;
  /** A full base backup; resolves with its id. */
  backup(): Promise<string>;
  /** The backup's files into `dataDir` (empty, owned by postgres). */
  restoreFiles(backupId: string, dataDir: string): Promise<void>;
  restoreCommand(dataDir: string): string;
  /** The tool's output for a command run with a wrong secret key: exit code, and whether it echoed the access key id. */
  wrongSecret(): Promise<{
    exitCode: number;
    echoesAccessKeyId: boolean;
    echoesSecret: boolean;
    firstLine: string;
  }>;
}

interface Failure {
  code?: number | string;
  stdout?: string;
  stderr?: string;
}

function failureOf(error: unknown): Failure {
  return typeof error === 'object' && error !== null ? error : {};
}

async function toolVersion(command: string, args: string[]): Promise<string> {
  const { stdout, stderr } = await run(command, args);
  return `${stdout}${stderr}`.trim().split(/\s+/).pop() ?? 'unknown';
}

/** A full backup through the engine with something the engine's own configuration does not do. */
export interface BackupVariant {
  /** Options for the configuration's global section; an option the engine sets takes this value instead. */
  readonly options?: Readonly<Record<string, string>>;
  /**
   * Where the repository is: the engine's S3 bucket (the default), or a posix directory on the
   * local disk (a stanza of its own; its archive is empty, so the variant needs archive-check=n).
   */
  readonly repository?: 's3' | 'posix';
  /**
   * Read the data directory through a pgBackRest TLS server on the instance, as the operator's
   * backup pod does (the repository host of ADR 0215), instead of locally.
   */
  readonly remote?: boolean;
}

/** pgBackRest's tool, plus a full backup with options the engine does not set. */
export interface PgBackRestTool extends BackupTool {
  /** What the engine's restore_command and recovery settings name. */
  readonly configFile: string;
  readonly stanza: string;
  /**
   * The engine's takeBaseBackup with the engine's configuration changed as `variant` says,
   * through a configuration file of its own.
   */
  backupWith(variant: BackupVariant): Promise<string>;
  /** Stops what the variants started (the TLS server). */
  stop(): Promise<void>;
}

/** `config` with each option set to its value: replaced where the engine sets it, else added to [global]. */
export function withOptions(config: string, options: Readonly<Record<string, string>>): string {
  let text = config;
  for (const [name, value] of Object.entries(options)) {
    const pattern = new RegExp(`^${name}=.*$`, 'm');
    text = pattern.test(text)
      ? text.replace(pattern, `${name}=${value}`)
      : text.replace('[global]\n', `[global]\n${name}=${value}\n`);
  }
  return text;
}

/** The same configuration with a posix repository in `path` in place of the bucket. */
function onPosix(config: string, path: string): string {
  return config
    .split('\n')
    .filter((l) => !/^repo1-(s3-|storage-)/.test(l))
    .join('\n')
    .replace(/^repo1-type=.*$/m, 'repo1-type=posix')
    .replace(/^repo1-path=.*$/m, `repo1-path=${path}`);
}

/** pgBackRest through the engine: stanza per cluster, zstd, credentials in the environment. */
export async function pgBackRestTool(
  bed: PlainPostgresBed,
  s3: S3TestServer,
  bucket: string,
  primary: Primary,
): Promise<PgBackRestTool> {
  const stanza = 'bench';
  const prefix = 'pgbackrest';
  const workDir = bed.directory('pgbackrest');
  const configFile = join(workDir, 'pgbackrest.conf');
  const destination = {
    bucket,
    prefix,
    region: s3.region,
    forcePathStyle: true,
    ...(s3.endpoint ? { endpoint: s3.endpoint } : {}),
    ...(s3.caFile ? { caFile: s3.caFile } : {}),
  };
  const instance = {
    dataDir: primary.dataDir,
    port: primary.port,
    socketDir: primary.socketDir,
    user: 'postgres',
  };
  const config = renderPgBackRestConfig({ stanza, destination, workDir, instance });
  writeFileSync(configFile, config);
  bed.own(configFile);
  const credentials = { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey };
  const target = { configFile, stanza };
  const invocation: PgBackRestInvocation = { ...target, credentials, runAs: bed.runAs };
  let variants = 0;
  let server: ManagedProcess | undefined;
  let remote: string | undefined;
  /**
   * The operator's path (ADR 0215): pgBackRest's TLS server beside the instance, under a serving
   * certificate of a throwaway CA, and a repository host configuration that reaches it with a
   * client certificate of that CA (common name homeostat-backup) on loopback.
   */
  const remoteConfig = async (): Promise<string> => {
    if (remote !== undefined) return remote;
    const pki = bed.directory('pgbackrest-tls');
    const ca = await createTestCa(pki, 'ca', 'homeostat-bench-ca');
    const serving = await issueTestCertificate(ca, pki, 'server', {
      subject: '/CN=localhost',
      sans: ['DNS:localhost'],
      usages: ['serverAuth'],
      describe: 'the pgBackRest server certificate',
    });
    const client = await issueTestCertificate(ca, pki, 'client', {
      subject: '/CN=homeostat-backup',
      usages: ['clientAuth'],
      describe: 'the backup client certificate',
    });
    // pgBackRest takes a key only when its owner alone can read it.
    for (const file of [ca.cert, serving.cert, serving.key, client.cert, client.key]) {
      chmodSync(file, 0o600);
      bed.own(file);
    }
    const port = await freeLoopbackPort();
    const serverDir = bed.directory('pgbackrest-server');
    const serverConfig = join(serverDir, 'pgbackrest.conf');
    writeFileSync(
      serverConfig,
      renderPgBackRestConfig({
        stanza,
        destination,
        workDir: serverDir,
        instance,
        tlsServer: {
          address: '127.0.0.1',
          port,
          certFile: serving.cert,
          keyFile: serving.key,
          caFile: ca.cert,
          clientCommonName: 'homeostat-backup',
        },
      }),
    );
    bed.own(serverConfig);
    const [command, ...args] = [...bed.runAs, 'pgbackrest', `--config=${serverConfig}`, 'server'];
    server = startProcess({
      name: 'pgbackrest-server',
      command: command ?? 'pgbackrest',
      args,
      logFile: join(bed.root, 'pgbackrest-server.log'),
      env: { PATH: '/usr/bin:/bin', LANG: 'C.UTF-8' },
      cwd: bed.root,
    });
    const hostDir = bed.directory('pgbackrest-repository-host');
    remote = renderRepositoryHostConfig({
      stanza,
      destination,
      workDir: hostDir,
      instances: [{ ...instance, host: 'localhost' }],
      client: { certFile: client.cert, keyFile: client.key, caFile: ca.cert },
      serverPort: port,
      fromStandby: false,
    });
    // The server answers once it listens; `check` through it is the first call that needs it.
    const probeConfig = join(hostDir, 'probe.conf');
    writeFileSync(probeConfig, remote);
    bed.own(probeConfig);
    await waitUntil(
      'pgBackRest server on loopback',
      async () => {
        await runPgBackRest({ ...invocation, configFile: probeConfig }, 'check');
        return true;
      },
      {
        timeoutMs: 30_000,
        intervalMs: 200,
        describe: () => logTail(join(bed.root, 'pgbackrest-server.log')),
      },
    );
    return remote;
  };
  return {
    name: 'pgbackrest',
    configFile,
    stanza,
    version: await toolVersion('pgbackrest', ['version']),
    backupPrefix: `${prefix}/backup`,
    walPrefix: `${prefix}/archive`,
    serverEnv: credentialEnvironment(credentials),
    archiveCommand: archiveCommand(target),
    prepare: () => ensureStanza(invocation),
    backup: async () => (await takeBaseBackup(invocation)).label,
    backupWith: async (variant) => {
      const n = ++variants;
      let text = variant.remote ? await remoteConfig() : config;
      if (variant.repository === 'posix') text = onPosix(text, join(workDir, `posix-repo-${n}`));
      text = withOptions(text, variant.options ?? {});
      const variantConfig = join(workDir, `pgbackrest-variant-${n}.conf`);
      writeFileSync(variantConfig, text);
      bed.own(variantConfig);
      const variantInvocation = { ...invocation, configFile: variantConfig };
      if (variant.repository === 'posix') await ensureStanza(variantInvocation);
      return (await takeBaseBackup(variantInvocation)).label;
    },
    stop: async () => {
      await server?.stop();
    },
    restoreFiles: async (label, dataDir) => {
      const backup = (await readRepository(invocation)).backups.find((b) => b.label === label);
      if (!backup) throw new Error(`no backup ${label}`);
      await restoreBackupFiles(invocation, backup, dataDir);
    },
    restoreCommand: (dataDir) => restoreCommand(target, dataDir),
    wrongSecret: async () => {
      const env = {
        ...process.env,
        ...credentialEnvironment({ ...credentials, secretAccessKey: 'wrong-secret-0123456789' }),
      };
      try {
        await run(
          'pgbackrest',
          [`--config=${configFile}`, `--stanza=${stanza}`, 'check', '--log-level-console=error'],
          { env },
        );
        return { exitCode: 0, echoesAccessKeyId: false, echoesSecret: false, firstLine: '' };
      } catch (error) {
        const f = failureOf(error);
        const out = `${f.stdout ?? ''}${f.stderr ?? ''}`;
        return {
          exitCode: typeof f.code === 'number' ? f.code : -1,
          echoesAccessKeyId: out.includes(s3.accessKeyId),
          echoesSecret: out.includes('wrong-secret-0123456789'),
          firstLine: redactToolOutput(out, credentials).split('\n')[0] ?? '',
        };
      }
    },
  };
}

/** Barman Cloud: one server name per cluster under the bucket, gzip, credentials as AWS_* variables. */
export async function barmanCloudTool(
  bed: PlainPostgresBed,
  s3: S3TestServer,
  bucket: string,
  primary: Primary,
): Promise<BackupTool> {
  const server = 'bench';
  const url = `s3://${bucket}/barman`;
  const endpoint = ['--cloud-provider', 'aws-s3', '--endpoint-url', s3.endpoint];
  const env: Record<string, string> = {
    AWS_ACCESS_KEY_ID: s3.accessKeyId,
    AWS_SECRET_ACCESS_KEY: s3.secretAccessKey,
    AWS_DEFAULT_REGION: s3.region,
    HOME: bed.root,
    ...(s3.caFile ? { AWS_CA_BUNDLE: s3.caFile } : {}),
  };
  const asPostgres = (command: string, args: string[], extraEnv: Record<string, string> = env) => {
    const [file, ...rest] = [...bed.runAs, command, ...args];
    return run(file ?? command, rest, { env: { PATH: '/usr/bin:/bin', ...extraEnv }, maxBuffer: 64 << 20 });
  };
  return {
    name: 'barman-cloud',
    version: await toolVersion('barman-cloud-backup', ['--version']),
    backupPrefix: `barman/${server}/base`,
    walPrefix: `barman/${server}/wals`,
    serverEnv: env,
    archiveCommand: ['barman-cloud-wal-archive', ...endpoint, '--gzip', url, server, '%p'].join(' '),
    prepare: async () => undefined,
    backup: async () => {
      await asPostgres('barman-cloud-backup', [
        ...endpoint,
        '--gzip',
        // As pgBackRest's start-fast: without it the backup waits for a spread checkpoint.
        '--immediate-checkpoint',
        '--host',
        primary.socketDir,
        '--port',
        String(primary.port),
        '--user',
        'postgres',
        url,
        server,
      ]);
      const { stdout } = await asPostgres('barman-cloud-backup-list', [
        ...endpoint,
        '--format',
        'json',
        url,
        server,
      ]);
      const listed: unknown = JSON.parse(stdout);
      const ids = JSON.stringify(listed).match(/"backup_id":\s*"([^"]+)"/g) ?? [];
      const last = ids[ids.length - 1]?.split('"')[3];
      if (!last) throw new Error('barman-cloud-backup-list shows no backup');
      return last;
    },
    restoreFiles: async (backupId, dataDir) => {
      await asPostgres('barman-cloud-restore', [...endpoint, url, server, backupId, dataDir]);
    },
    restoreCommand: () => ['barman-cloud-wal-restore', ...endpoint, url, server, '%f', '%p'].join(' '),
    wrongSecret: async () => {
      try {
        await asPostgres('barman-cloud-backup-list', [...endpoint, url, server], {
          ...env,
          AWS_SECRET_ACCESS_KEY: 'wrong-secret-0123456789',
        });
        return { exitCode: 0, echoesAccessKeyId: false, echoesSecret: false, firstLine: '' };
      } catch (error) {
        const f = failureOf(error);
        const out = `${f.stdout ?? ''}${f.stderr ?? ''}`;
        return {
          exitCode: typeof f.code === 'number' ? f.code : -1,
          echoesAccessKeyId: out.includes(s3.accessKeyId),
          echoesSecret: out.includes('wrong-secret-0123456789'),
          firstLine:
            redactToolOutput(out, { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey })
              .split('\n')
              .find((l) => l.trim().length > 0) ?? '',
        };
      }
    },
  };
}
