// Plain PostgreSQL 15 servers for the backup tests and benchmark: initdb and postgres run directly
// (as the `postgres` OS user when we are root), not through the instance entrypoint, because the
// entrypoint owns archive_mode (off until the operator wires backups in) and a restored data
// directory must start with the restore's own settings. Trust authentication on loopback: these
// servers hold nothing but test rows.
import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freeLoopbackPort, logTail, startProcess, waitUntil, type ManagedProcess } from '@homeostat/testing';
import {
  withConnection,
  defaultConnectOptions,
  type Credentials,
  type InstanceEndpoint,
} from '../instance/instance.ts';
import { postgresBinDir } from './postgres-processes.ts';

/** One running server. */
export interface PlainInstance extends InstanceEndpoint {
  readonly dataDir: string;
  readonly socketDir: string;
  readonly process: ManagedProcess;
  /** Fast shutdown; resolves once every process of the server has exited. */
  stop(): Promise<void>;
}

export const trustSuperuser: Credentials = { user: 'postgres', password: '' };

/** Servers and their files under one temporary root the `postgres` user owns; `cleanup()` removes all. */
export class PlainPostgresBed {
  readonly root: string;
  /** Words that run a command as the `postgres` user (empty when we are not root). */
  readonly runAs: readonly string[];
  readonly #owner: { uid: number; gid: number } | undefined;
  readonly #instances: PlainInstance[] = [];

  constructor(label = 'pg-plain') {
    this.root = mkdtempSync(join(tmpdir(), `homeostat-${label}-`));
    // The postgres user must reach every file here (a mkdtemp directory is 700).
    chmodSync(this.root, 0o755);
    if (process.getuid?.() === 0) {
      const id = (flag: string) =>
        Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
      this.#owner = { uid: id('-u'), gid: id('-g') };
      this.runAs = ['setpriv', '--reuid=postgres', '--regid=postgres', '--init-groups', '--'];
      chownSync(this.root, this.#owner.uid, this.#owner.gid);
    } else {
      this.#owner = undefined;
      this.runAs = [];
    }
  }

  /** A new directory under the root, owned by the postgres user, mode 700 (as a data directory must be). */
  directory(name: string): string {
    const dir = join(this.root, name);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    if (this.#owner) chownSync(dir, this.#owner.uid, this.#owner.gid);
    return dir;
  }

  /** Gives a file written by us (as root) to the postgres user. */
  own(path: string): void {
    if (this.#owner) chownSync(path, this.#owner.uid, this.#owner.gid);
  }

  /** A fresh data directory made by initdb. */
  initdb(name: string): string {
    const dataDir = join(this.directory(name), 'data');
    execFileSync(
      this.runAs[0] ?? join(postgresBinDir, 'initdb'),
      [
        ...this.runAs.slice(1),
        ...(this.runAs.length > 0 ? [join(postgresBinDir, 'initdb')] : []),
        '--auth=trust',
        '--username=postgres',
        '--no-sync',
        '-D',
        dataDir,
      ],
      { cwd: this.root, stdio: 'pipe' },
    );
    return dataDir;
  }

  /** Where the server `name` will listen: its socket directory, made now, and a free port. */
  async address(name: string): Promise<{ port: number; socketDir: string }> {
    return { port: await freeLoopbackPort(), socketDir: this.directory(`${name}-run`) };
  }

  /**
   * Starts postgres on `dataDir` at `address` (a free loopback port when absent); `settings` are
   * passed as -c options (which win over every configuration file), `env` is the server's
   * environment (its archive_command and restore_command inherit it). Resolves once it accepts SQL.
   */
  async start(
    name: string,
    dataDir: string,
    options: {
      readonly address?: { port: number; socketDir: string };
      readonly settings?: Readonly<Record<string, string>>;
      readonly env?: Readonly<Record<string, string>>;
    } = {},
  ): Promise<PlainInstance> {
    const { port, socketDir } = options.address ?? (await this.address(name));
    const settings = options.settings ?? {};
    const env = options.env ?? {};
    const logFile = join(this.root, `${name}.log`);
    const serverOptions = {
      listen_addresses: '127.0.0.1',
      unix_socket_directories: socketDir,
      fsync: 'off',
      shared_buffers: '32MB',
      max_connections: '20',
      ...settings,
    };
    const args = ['-D', dataDir, '-p', String(port)];
    for (const [key, value] of Object.entries(serverOptions)) args.push('-c', `${key}=${value}`);
    const proc = startProcess({
      name,
      command: this.runAs[0] ?? join(postgresBinDir, 'postgres'),
      args: [
        ...this.runAs.slice(1),
        ...(this.runAs.length > 0 ? [join(postgresBinDir, 'postgres')] : []),
        ...args,
      ],
      logFile,
      env: { PATH: `${postgresBinDir}:/usr/bin:/bin`, LANG: 'C.UTF-8', ...env },
      cwd: this.root,
    });
    const instance: PlainInstance = {
      name,
      host: '127.0.0.1',
      port,
      dataDir,
      socketDir,
      process: proc,
      stop: async () => {
        if (!proc.isRunning()) return;
        process.kill(proc.pid, 'SIGINT');
        await proc.exited;
      },
    };
    this.#instances.push(instance);
    await waitUntil(
      `${name} accepts SQL on 127.0.0.1:${port}`,
      async () => {
        await withConnection(instance, trustSuperuser, defaultConnectOptions, (c) => c.query('SELECT 1'));
        return true;
      },
      {
        timeoutMs: 120_000,
        intervalMs: 100,
        abort: proc.exited.then((code) => `postgres exited (${String(code)})`),
        describe: () => logTail(logFile, 40),
      },
    );
    return instance;
  }

  /** Stops every server and deletes the root. */
  async cleanup(): Promise<void> {
    await Promise.all(this.#instances.map((i) => i.process.stop(5000)));
    rmSync(this.root, { recursive: true, force: true });
  }
}
