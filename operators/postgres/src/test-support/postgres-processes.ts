// Real PostgreSQL instances for tests and the benchmark: each one is the production entrypoint
// (entrypoint/instance.sh) run as a plain process on 127.0.0.1, as the `postgres` OS user when we
// are root (PostgreSQL refuses to run as root), with its own data directory, socket directory and
// secrets under one temporary root. That user may not be able to enter the checkout (a clone in
// root's home or a `mktemp -d` directory is mode 700), so it gets everything it needs, the
// entrypoint included, under that root, and starts there.
import {
  readdirSync,
  chmodSync,
  chownSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  renameSync,
  rmSync,
  writeFileSync,
  existsSync,
  readFileSync,
} from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { freeLoopbackPort, logTail, startProcess, waitUntil, type ManagedProcess } from '@homeostat/testing';
import {
  withConnection,
  defaultConnectOptions,
  type Credentials,
  type InstanceEndpoint,
} from '../instance/instance.ts';
import { releaseSharedMemory, sharedMemoryHeldBy } from './orphaned-shared-memory.ts';

/** The entrypoint in the checkout; each test bed runs a copy of it (see `PostgresTestBed.entrypoint`). */
export const entrypointSource = fileURLToPath(new URL('../../entrypoint/instance.sh', import.meta.url));
export const postgresBinDir = '/usr/lib/postgresql/15/bin';

/** Settings that make a test instance start in about a second and stay small. */
const testParameters = [
  'fsync = off',
  'synchronous_commit = on',
  'full_page_writes = on',
  'shared_buffers = 16MB',
  'max_connections = 40',
  'log_min_messages = warning',
  "log_line_prefix = '%m [%p] '",
  // A standby that lost its primary retries quickly; the default 5 s dominates a failover otherwise.
  'wal_retrieve_retry_interval = 200ms',
].join('\n');

/** `root` and all its descendants, read from /proc (PostgreSQL's children each call setsid()). */
function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // The command name may contain spaces and parentheses; the ppid follows its closing one.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // the process ended while we looked
    }
  }
  const tree = [root];
  for (let i = 0; i < tree.length; i++) tree.push(...(children.get(tree[i] ?? -1) ?? []));
  return tree;
}

function signalPid(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // already gone
  }
}

/** Sends `signal` to a process and all its descendants, ignoring those already gone. */
function signalTree(root: number, signal: NodeJS.Signals): void {
  for (const pid of processTree(root)) signalPid(pid, signal);
}

interface OsUser {
  uid: number;
  gid: number;
}

function postgresOsUser(): OsUser | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  return { uid: id('-u'), gid: id('-g') };
}

/** A running (or stopped) instance started through the entrypoint. */
export interface TestInstance extends InstanceEndpoint {
  readonly dataDir: string;
  readonly logFile: string;
  process: ManagedProcess;
  /** SIGKILL to every process of the instance at once, like a container being killed. */
  kill9(): Promise<void>;
  /** SIGSTOP to every process of the instance: alive, sockets open, answering nothing. */
  freeze(): void;
  /** SIGCONT to every process of the instance: a frozen instance carries on. */
  thaw(): void;
  /** Fast shutdown (SIGINT): clean, ends sessions, sends the last WAL to connected standbys. */
  stopFast(): Promise<void>;
  isRunning(): boolean;
}

export interface StartOptions {
  role: 'primary' | 'replica';
  primary?: InstanceEndpoint;
  /** Extra postgresql.conf lines (PG_PARAMETERS). */
  parameters?: string;
  /** More environment variables for the entrypoint (they win over the bed's). */
  env?: Record<string, string>;
  /**
   * The serving certificate, its key and the CA (PEM), as the pod mounts <cluster>-server: the
   * instance serves TLS only (PG_TLS_DIR), and the bed and replicas verify it against `ca`.
   */
  tls?: { certificate: string; privateKey: string; ca: string };
  /** The application role and database the bootstrap creates (PG_APP_SECRET_DIR), if any. */
  app?: { username: string; password: string; database: string };
  /**
   * An /etc/hosts file for this process alone (bind-mounted in a mount namespace of its own, so
   * root only): names that resolve whatever the network does, as a node-local DNS cache answers.
   */
  hosts?: string;
}

/** A set of instances sharing secrets under one temporary root; `cleanup()` stops and removes all. */
export class PostgresTestBed {
  readonly root: string;
  /** The copy of the entrypoint the instances run, under `root` where the `postgres` user can reach it. */
  readonly entrypoint: string;
  #superuser: Credentials;
  readonly instances = new Map<string, TestInstance>();
  readonly #user: OsUser | undefined;
  readonly #ports = new Map<string, number>();

  /**
   * `superuser`: the superuser initdb creates (default postgres with a random password);
   * `replication`: the replication role's (default streaming_replica with a random password).
   */
  constructor(label = 'pg', superuser?: Credentials, replication?: Credentials) {
    if (!existsSync(join(postgresBinDir, 'postgres'))) {
      throw new Error(
        `PostgreSQL 15 is not installed (${postgresBinDir} is missing): install the Debian 'postgresql' package`,
      );
    }
    this.#user = postgresOsUser();
    this.root = mkdtempSync(join(tmpdir(), `homeostat-${label}-`));
    this.entrypoint = join(this.root, 'instance.sh');
    copyFileSync(entrypointSource, this.entrypoint);
    chmodSync(this.entrypoint, 0o755);
    this.#superuser = superuser ?? { user: 'postgres', password: `su-${randomBytes(12).toString('hex')}` };
    this.#writeSecret('superuser', this.#superuser.user, this.#superuser.password);
    this.#writeSecret(
      'replication',
      replication?.user ?? 'streaming_replica',
      replication?.password ?? `repl-${randomBytes(12).toString('hex')}`,
    );
    this.#own(this.root);
    if (this.#user) this.#checkReachable();
  }

  /** The superuser the instances are bootstrapped with, and the tests connect as. */
  get superuser(): Credentials {
    return this.#superuser;
  }

  /**
   * Mounts other superuser and replication Secrets for the starts that follow, as a kubelet mounts
   * the Secrets as they are when it starts a container.
   */
  mountSecrets(superuser: Credentials, replication: Credentials): void {
    this.#superuser = superuser;
    this.#writeSecret('superuser', superuser.user, superuser.password);
    this.#writeSecret('replication', replication.user, replication.password);
  }

  /** Fails early, and says why, when the `postgres` user cannot run the entrypoint's copy. */
  #checkReachable(): void {
    try {
      execFileSync('setpriv', [
        '--reuid=postgres',
        '--regid=postgres',
        '--init-groups',
        '--',
        'test',
        '-x',
        this.entrypoint,
      ]);
    } catch (error) {
      throw new Error(
        `the postgres user cannot run ${this.entrypoint}: it must be able to enter every directory above it (TMPDIR=${tmpdir()})`,
        { cause: error },
      );
    }
  }

  #own(path: string): void {
    if (this.#user) chownSync(path, this.#user.uid, this.#user.gid);
  }

  #writeSecret(name: string, username: string, password: string): void {
    const dir = join(this.root, 'secrets', name);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    // Renamed into place: an entrypoint starting meanwhile reads the old file or the new, never half.
    for (const [key, value] of [
      ['username', username],
      ['password', password],
    ] as const) {
      writeFileSync(join(dir, `.${key}`), value, { mode: 0o600 });
      this.#own(join(dir, `.${key}`));
      renameSync(join(dir, `.${key}`), join(dir, key));
    }
    for (const p of [join(this.root, 'secrets'), dir, join(dir, 'username'), join(dir, 'password')])
      this.#own(p);
  }

  /**
   * Files as a Secret volume holds them, in a directory of their own under the bed's secrets: each
   * readable by the postgres user alone (PostgreSQL and pgBackRest refuse a key others may read).
   */
  writeSecretVolume(volume: string, files: Readonly<Record<string, string>>): string {
    const dir = join(this.root, 'secrets', volume);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    this.#own(join(this.root, 'secrets'));
    this.#own(dir);
    for (const [key, value] of Object.entries(files)) {
      writeFileSync(join(dir, `.${key}`), value, { mode: 0o600 });
      this.#own(join(dir, `.${key}`));
      renameSync(join(dir, `.${key}`), join(dir, key));
    }
    return dir;
  }

  /** Where the TLS files of `name` are (PG_TLS_DIR): what the pod mounts from <cluster>-server. */
  tlsDir(name: string): string {
    return join(this.root, 'secrets', `tls-${name}`);
  }

  /** The TLS files of `name`, as a Secret volume holds them. */
  #writeTls(name: string, tls: NonNullable<StartOptions['tls']>): string {
    return this.writeSecretVolume(`tls-${name}`, {
      'tls.crt': tls.certificate,
      'tls.key': tls.privateKey,
      'ca.crt': tls.ca,
    });
  }

  /**
   * Replaces the TLS files `name` mounts, as the kubelet does once the operator has renewed
   * <cluster>-server (to a running instance; its next start takes them from `StartOptions.tls`).
   */
  replaceTls(name: string, tls: NonNullable<StartOptions['tls']>): void {
    this.#writeTls(name, tls);
  }

  /** Runs the entrypoint for `name` and waits until it answers SQL. */
  async start(name: string, options: StartOptions): Promise<TestInstance> {
    const previous = this.instances.get(name);
    if (previous?.isRunning()) throw new Error(`${name} is already running`);
    const { proc, port, dataDir, logFile } = await this.#run(name, options, []);
    const instance: TestInstance = {
      name,
      host: '127.0.0.1',
      port,
      ...(options.tls ? { ca: options.tls.ca } : {}),
      dataDir,
      logFile,
      process: proc,
      isRunning: () => instance.process.isRunning(),
      async kill9() {
        if (!instance.process.isRunning()) return;
        // Freeze the postmaster first so it cannot fork while its children are being killed.
        signalTree(instance.process.pid, 'SIGSTOP');
        const tree = processTree(instance.process.pid);
        const held = sharedMemoryHeldBy(tree);
        for (const pid of tree) signalPid(pid, 'SIGKILL');
        await instance.process.exited;
        // What a real container's IPC namespace takes with it; here it would outlive the test.
        await releaseSharedMemory(held);
      },
      freeze() {
        signalTree(instance.process.pid, 'SIGSTOP');
      },
      thaw() {
        signalTree(instance.process.pid, 'SIGCONT');
      },
      async stopFast() {
        if (!instance.process.isRunning()) return;
        process.kill(instance.process.pid, 'SIGINT');
        const timer = setTimeout(() => void instance.kill9(), 30_000);
        await instance.process.exited.finally(() => clearTimeout(timer));
      },
    };
    this.instances.set(name, instance);
    await waitUntil(
      `${name} (${options.role}) accepts SQL on 127.0.0.1:${port}`,
      async () => {
        await withConnection(instance, this.superuser, defaultConnectOptions, (c) => c.query('SELECT 1'));
        return true;
      },
      {
        timeoutMs: 60_000,
        intervalMs: 100,
        abort: proc.exited.then((code) => `the entrypoint exited (${code})`),
        describe: () => logTail(logFile, 40),
      },
    );
    return instance;
  }

  /**
   * Runs the entrypoint for `name` with `args` (`self-fence` runs the watcher) and returns its
   * process without waiting for anything: for tests of how the script itself behaves.
   */
  async runEntrypoint(
    name: string,
    options: StartOptions,
    args: readonly string[] = [],
  ): Promise<ManagedProcess> {
    return (await this.#run(name, options, args)).proc;
  }

  async #run(name: string, options: StartOptions, extraArgs: readonly string[]) {
    const port = this.#ports.get(name) ?? (await freeLoopbackPort());
    this.#ports.set(name, port);
    const home = join(this.root, name);
    const { runDir, dataDir } = this.instanceDirs(name);
    for (const dir of [home, runDir]) {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      this.#own(dir);
    }
    const logFile = join(this.root, `${name}.log`);
    if (options.app) this.#writeSecret(`app-${name}`, options.app.username, options.app.password);
    const tlsDir = options.tls ? this.#writeTls(name, options.tls) : undefined;
    // As a kubelet does for each container start: an empty termination-message file.
    writeFileSync(this.terminationLog(name), '', { mode: 0o600 });
    this.#own(this.terminationLog(name));
    const env: NodeJS.ProcessEnv = {
      PATH: `${postgresBinDir}:/usr/bin:/bin`,
      HOME: home,
      LANG: 'C.UTF-8',
      PGDATA: dataDir,
      PGPORT: String(port),
      INSTANCE_NAME: name,
      INSTANCE_ROLE: options.role,
      PG_RUN_DIR: runDir,
      PG_LISTEN_ADDRESSES: '127.0.0.1',
      PG_SUPERUSER_SECRET_DIR: join(this.root, 'secrets', 'superuser'),
      PG_REPLICATION_SECRET_DIR: join(this.root, 'secrets', 'replication'),
      PG_NO_SYNC: 'true',
      PG_TERMINATION_LOG: this.terminationLog(name),
      ...(options.app
        ? {
            PG_APP_SECRET_DIR: join(this.root, 'secrets', `app-${name}`),
            PG_APP_DATABASE: options.app.database,
          }
        : {}),
      ...(tlsDir ? { PG_TLS_DIR: tlsDir } : {}),
      PG_PRIMARY_WAIT_SECONDS: '20',
      PG_PARAMETERS: options.parameters ? `${testParameters}\n${options.parameters}` : testParameters,
      ...(options.primary
        ? { PRIMARY_HOST: options.primary.host, PRIMARY_PORT: String(options.primary.port) }
        : {}),
      ...options.env,
    };
    const [plainCommand, plainArgs] = this.#user
      ? [
          'setpriv',
          [
            '--reuid=postgres',
            '--regid=postgres',
            '--init-groups',
            '--pdeathsig',
            'SIGKILL',
            '--',
            this.entrypoint,
            ...extraArgs,
          ],
        ]
      : [this.entrypoint, [...extraArgs]];
    const [command, args] = options.hosts
      ? [
          'unshare',
          [
            '--mount',
            '--',
            'sh',
            '-c',
            'mount --bind "$0" /etc/hosts && exec "$@"',
            options.hosts,
            plainCommand,
            ...plainArgs,
          ],
        ]
      : [plainCommand, plainArgs];
    writeFileSync(logFile, `--- start ${name} as ${options.role} ${new Date().toISOString()}\n`, {
      flag: 'a',
    });
    // Started in its own directory: PostgreSQL's tools change back to where they started, and
    // the checkout may be out of the postgres user's reach.
    const proc = startProcess({ name, command, args, logFile, env, cwd: home });
    return { proc, port, dataDir, logFile };
  }

  /**
   * Runs the entrypoint as a run-to-completion container named `name` would (`backup`: a backup
   * pod's), as the postgres user with `env` alone beside the basics; its termination message goes
   * to terminationLog(name).
   */
  runJob(name: string, args: readonly string[], env: Readonly<Record<string, string>>): ManagedProcess {
    const home = join(this.root, name);
    mkdirSync(home, { recursive: true, mode: 0o700 });
    this.#own(home);
    writeFileSync(this.terminationLog(name), '', { mode: 0o600 });
    this.#own(this.terminationLog(name));
    const logFile = join(this.root, `${name}.log`);
    const command = this.#user
      ? ['setpriv', '--reuid=postgres', '--regid=postgres', '--init-groups', '--pdeathsig', 'SIGKILL', '--']
      : [];
    const [first, ...rest] = [...command, this.entrypoint, ...args];
    return startProcess({
      name,
      command: first ?? this.entrypoint,
      args: rest,
      logFile,
      cwd: home,
      env: {
        PATH: `${postgresBinDir}:/usr/bin:/bin`,
        HOME: home,
        LANG: 'C.UTF-8',
        PG_TERMINATION_LOG: this.terminationLog(name),
        ...env,
      },
    });
  }

  /** The data and run directories of `name`: where a pod's volume and run directory are in this bed. */
  instanceDirs(name: string): { dataDir: string; runDir: string } {
    return { dataDir: join(this.root, name, 'data'), runDir: join(this.root, name, 'run') };
  }

  /** Where the entrypoint of `name` writes why it stopped (a container's terminationMessagePath). */
  terminationLog(name: string): string {
    return join(this.root, name, 'termination-log');
  }

  /** Every log the bed's instances wrote (entrypoint and server), concatenated. */
  allLogs(): string {
    return readdirSync(this.root)
      .filter((f) => f.endsWith('.log'))
      .map((f) => readFileSync(join(this.root, f), 'utf8'))
      .join('\n');
  }

  /** The entrypoint's own log lines for `name` (bootstrap, clone, rejoin method). */
  entrypointLog(name: string): string[] {
    const file = join(this.root, `${name}.log`);
    if (!existsSync(file)) return [];
    return readFileSync(file, 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('homeostat-entrypoint'));
  }

  /** Stops every instance and deletes the temporary root. */
  async cleanup(): Promise<void> {
    await Promise.all([...this.instances.values()].map((i) => i.kill9()));
    rmSync(this.root, { recursive: true, force: true });
  }
}
