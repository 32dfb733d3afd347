// Runs one pgBackRest command. The credentials go into the child's environment only; the child
// gets no other PGBACKREST_ variable from ours (a stray one would silently change an option). A
// failure becomes a BackupToolError whose message is the tool's reason, redacted: it is what a
// caller may put in a condition, an Event or a log.
import { execFile } from 'node:child_process';
import type { S3Credentials } from './destination.ts';
import { credentialEnvironment } from './pgbackrest-config.ts';
import { toolFailureSummary } from './redact.ts';
import { commonOptions, type PgBackRestTarget } from './wal-commands.ts';

/** A target plus what running the tool needs. */
export interface PgBackRestInvocation extends PgBackRestTarget {
  readonly credentials: S3Credentials;
  /** Words before the binary, e.g. setpriv, so the tool runs as the data directory's owner. */
  readonly runAs?: readonly string[];
  /** PATH for the child; the parent's when absent. */
  readonly path?: string;
  /**
   * Where the tool finds the credentials: in its environment (the default), or in a file of
   * `configIncludePath` mounted from the Secret (`renderCredentialsConfig`); `credentials` are
   * then only what redaction looks for.
   */
  readonly credentialsFrom?: 'environment' | 'include-path';
}

/** A pgBackRest command that failed; the message holds no credential. */
export class BackupToolError extends Error {
  override readonly name = 'BackupToolError';
  readonly command: string;
  readonly exitCode: number | undefined;
  constructor(command: string, exitCode: number | undefined, reason: string) {
    super(`pgbackrest ${command} failed${exitCode === undefined ? '' : ` (exit ${exitCode})`}: ${reason}`);
    this.command = command;
    this.exitCode = exitCode;
  }
}

function childEnvironment(invocation: PgBackRestInvocation): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!key.startsWith('PGBACKREST_') && value !== undefined) env[key] = value;
  }
  if (invocation.path !== undefined) env['PATH'] = invocation.path;
  if (invocation.credentialsFrom === 'include-path') return env;
  return { ...env, ...credentialEnvironment(invocation.credentials) };
}

/** Runs `pgbackrest <options> <command> <args>` and resolves with its stdout. */
export function runPgBackRest(
  invocation: PgBackRestInvocation,
  command: string,
  args: readonly string[] = [],
): Promise<string> {
  // Options may come anywhere, but a command's parameters (repo-ls's path) must follow it.
  const words = [invocation.binary ?? 'pgbackrest', ...commonOptions(invocation), command, ...args];
  const [file, ...argv] = [...(invocation.runAs ?? []), ...words];
  if (file === undefined) throw new Error('no command to run');
  return new Promise((resolve, reject) => {
    execFile(
      file,
      argv,
      { env: childEnvironment(invocation), maxBuffer: 64 * 1024 * 1024, encoding: 'utf8' },
      (error, stdout, stderr) => {
        if (!error) return resolve(stdout);
        const exitCode = typeof error.code === 'number' ? error.code : undefined;
        // Never the raw error as a cause: its message quotes the output unredacted.
        reject(
          new BackupToolError(
            command,
            exitCode,
            toolFailureSummary(`${stdout}\n${stderr}`, invocation.credentials),
          ),
        );
      },
    );
  });
}
