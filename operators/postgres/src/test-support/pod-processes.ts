// The stand-in kubelet and kube-proxy of one PostgreSQLCluster's pods, with real PostgreSQL
// processes on loopback, so the operator's failover can be tested against a real API server and
// real databases without a node: @homeostat/testing's ProcessKubelet owns the pods' lifecycle and
// status (restarts, a failed start's termination message and back-off, run-to-completion pods'
// ends, a node going down; see process-kubelet.ts), and this is its PostgreSQL runtime. Each
// instance pod starts through the production entrypoint in the role its annotation says (as the
// downward API would give it), with the pod's PG_PARAMETERS and PG_APP_DATABASE, its archiving
// environment (spec.backup: Secret references resolved, the CA written out) and the cluster's
// Secrets mounted; it is ready once the entrypoint's start has returned. The read-write "Service"
// is a TCP proxy to the running instance labelled primary, cut when there is none.
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { V1Pod, V1Secret } from '@kubernetes/client-node';
import { builtin, type KubeClient } from '@homeostat/reconcile';
import { kubeletApi } from '@homeostat/reconcile/testing';
import {
  ContainerFailure,
  ProcessKubelet,
  freeLoopbackPort,
  startTcpProxy,
  waitUntil,
  type Container,
  type ManagedProcess,
  type Run,
  type TcpProxy,
} from '@homeostat/testing';
import type { Credentials, InstanceEndpoint } from '../instance/instance.ts';
import { secretNames, tlsSecretNames } from '../controllers/cluster-names.ts';
import { backupPodLabel, backupPodPaths, backupPodSelector } from '../controllers/backup/backup-pod.ts';
import { drillLabel, drillSelector } from '../controllers/backup/drill-pod.ts';
import { expirePodLabel, expirePodSelector } from '../controllers/backup/expire-pod.ts';
import { ownRepository } from '../controllers/desired-backup.ts';
import { sourceRepository } from '../controllers/desired-recovery.ts';
import { instancePaths, tlsVolume } from '../controllers/desired-pod.ts';
import { annotationKeys, labelKeys } from '../controllers/operand-labels.ts';
import { PostgresTestBed, type TestInstance } from './postgres-processes.ts';

// How long a kubelet's crash-loop back-off keeps a failed container down, shortened for tests.
const crashBackoffMs = 1000;

const runsToCompletion = (pod: V1Pod): boolean =>
  [backupPodLabel, drillLabel, expirePodLabel].some((label) => pod.metadata?.labels?.[label] !== undefined);

export class PodProcesses {
  readonly #client: KubeClient;
  readonly #namespace: string;
  readonly #cluster: string;
  readonly #parameters: string | undefined;
  #kubelet: ProcessKubelet | undefined;
  #bed: PostgresTestBed | undefined;
  #app: Credentials | undefined;
  #tls: { certificate: string; privateKey: string; ca: string } | undefined;
  #rw: TcpProxy | undefined;
  #rwTarget = '';
  /** The loopback port of each instance's pgBackRest TLS server. */
  readonly #backupServerPorts = new Map<string, number>();
  /**
   * While true, expire pods are left unstarted, as a slow kubelet leaves them: what a test changes
   * meanwhile (a Secret) is what the pod starts with.
   */
  holdExpirePods = false;
  /** While true, restore drill pods are left unstarted: a drill under way for as long as a test needs. */
  holdDrillPods = false;
  /** Every start: pod name, role, for assertions. */
  readonly starts: { pod: string; role: string }[] = [];
  /** The containers of fenced pods: the real entrypoint, waiting while its instance is fenced. */
  readonly #fencedContainers = new Map<string, ManagedProcess>();

  constructor(client: KubeClient, namespace: string, cluster: string, parameters?: string) {
    this.#client = client;
    this.#namespace = namespace;
    this.#cluster = cluster;
    this.#parameters = parameters;
  }

  get bed(): PostgresTestBed {
    if (!this.#bed) throw new Error('PodProcesses not started');
    return this.#bed;
  }

  /** The loopback port of the read-write "Service". */
  get readWritePort(): number {
    if (!this.#rw) throw new Error('PodProcesses not started');
    return this.#rw.port;
  }

  /** The cluster's CA (PEM) as the pods last mounted it: what a client verifies the instances with. */
  get ca(): string | undefined {
    return this.#tls?.ca;
  }

  /** The instance the read-write "Service" sends to now, if any. */
  get readWriteTarget(): string {
    return this.#rwTarget;
  }

  /**
   * Where the operator reaches `instance`: its process (with the CA it serves TLS under, when it
   * does), or a closed port before it ever ran.
   */
  endpoint(instance: string): InstanceEndpoint {
    const running = this.#bed?.instances.get(instance);
    return running
      ? { name: instance, host: running.host, port: running.port, ...(running.ca ? { ca: running.ca } : {}) }
      : { name: instance, host: '127.0.0.1', port: 1 };
  }

  /** The process of a pod (to kill or freeze it, as a node would). */
  instance(pod: string): TestInstance {
    const found = this.#bed?.instances.get(pod);
    if (!found) throw new Error(`no process for ${pod}`);
    return found;
  }

  /**
   * Waits for the cluster's Secrets and mounts them as the pods would (the superuser is the
   * operator's; the replication and application roles are the cluster's), then runs pods until
   * stop(). Each pod's start mounts the Secrets as they are then, as a kubelet does: a cluster
   * deleted and created again may bring new ones, while its data stays in the bed (retained claims).
   */
  async start(): Promise<void> {
    const names = secretNames(this.#cluster);
    const [operator, replication, app] = await Promise.all([
      this.#secret(names.operator),
      this.#secret(names.replication),
      this.#secret(names.app),
    ]);
    this.#bed = new PostgresTestBed(`pods-${this.#cluster}`, operator, replication);
    this.#app = app;
    this.#rw = await startTcpProxy(1, '127.0.0.1');
    this.#rw.cut();
    const cluster = `app.kubernetes.io/instance=${this.#cluster}`;
    this.#kubelet = new ProcessKubelet({
      api: kubeletApi(this.#client, this.#namespace),
      runtime: {
        runsToCompletion,
        // Each start reads the pod as it is now: a fence (an annotation) reaches a restarted
        // container as the downward API volume gives it.
        createSandbox: () => Promise.resolve({ startContainer: (_image, pod) => this.#startInstance(pod) }),
        run: (pod) => this.#runJob(pod),
        observe: async (pods) => {
          this.#followPrimary(pods);
          await this.#followFences(pods);
        },
      },
      selectors: [
        `${labelKeys.cluster}=${this.#cluster}`,
        `${backupPodSelector},${cluster}`,
        `${drillSelector},${drillLabel}=${this.#cluster}`,
        `${expirePodSelector},${cluster}`,
      ],
      workDir: this.#bed.root,
      crashBackoffMs,
      intervalMs: 100,
    });
    this.#kubelet.start();
  }

  /** Mounts the cluster's Secrets as they are now; false while one is missing (the pod waits). */
  async #mountCurrentSecrets(): Promise<boolean> {
    const names = secretNames(this.#cluster);
    const [operator, replication, app, server] = await Promise.all(
      [names.operator, names.replication, names.app, tlsSecretNames(this.#cluster).server].map((n) =>
        this.#client.find(builtin.secrets, n, this.#namespace),
      ),
    );
    if (!operator || !replication || !app || !server) return false;
    const text = (key: string) => Buffer.from(server.data?.[key] ?? '', 'base64').toString();
    this.#tls = { certificate: text('tls.crt'), privateKey: text('tls.key'), ca: text('ca.crt') };
    const credentials = (secret: V1Secret): Credentials => {
      const field = (key: string) => Buffer.from(secret.data?.[key] ?? '', 'base64').toString();
      return { user: field('username'), password: field('password') };
    };
    this.bed.mountSecrets(credentials(operator), credentials(replication));
    this.#app = credentials(app);
    return true;
  }

  async #secret(name: string): Promise<Credentials> {
    let secret: V1Secret | undefined;
    await waitUntil(
      `Secret ${name}`,
      async () => (secret = await this.#client.find(builtin.secrets, name, this.#namespace)) !== undefined,
      { timeoutMs: 30_000, intervalMs: 100 },
    );
    const field = (key: string) => Buffer.from(secret?.data?.[key] ?? '', 'base64').toString();
    return { user: field('username'), password: field('password') };
  }

  /**
   * The postgres container's archiving environment (spec.backup) as a kubelet would give it: each
   * secretKeyRef resolved from the Secret as it is now, the CA Secret's key written where its
   * volume would be, and the pod's paths (data, run directory, TLS, CA) replaced by the bed's,
   * which has no mount namespace; pgBackRest's TLS server listens on a loopback port of its own
   * (kept across restarts, as a pod's IP and port would be). undefined while a Secret a required
   * variable names is missing: the container waits, as a kubelet's CreateContainerConfigError does.
   */
  async #backupEnvironment(pod: V1Pod, name: string): Promise<Record<string, string> | undefined> {
    const { dataDir, runDir } = this.bed.instanceDirs(name);
    const env = await this.#resolveEnvironment(
      pod,
      'postgres',
      /^(PG_BACKREST_|PG_ARCHIVE_|PGBACKREST_|PG_RECOVERY_)/,
      name,
      [
        [instancePaths.pgdata, dataDir],
        [instancePaths.run, runDir],
        [instancePaths.tls, this.bed.tlsDir(name)],
      ],
    );
    const config = env?.['PG_BACKREST_CONFIG'];
    if (!env || config === undefined) return env;
    let port = this.#backupServerPorts.get(name);
    if (port === undefined) {
      port = await freeLoopbackPort();
      this.#backupServerPorts.set(name, port);
    }
    env['PG_BACKREST_CONFIG'] = config
      .replace(/^tls-server-address=.*$/m, 'tls-server-address=127.0.0.1')
      .replace(/^tls-server-port=.*$/m, `tls-server-port=${port}`);
    return env;
  }

  /**
   * The variables of `container` whose names match `only`, as a kubelet gives them: secretKeyRefs
   * resolved, the backup CA's Secret volume written out, each path in `moves` replaced by the
   * bed's. undefined while a required Secret is missing.
   */
  async #resolveEnvironment(
    pod: V1Pod,
    containerName: string,
    only: RegExp,
    volumePrefix: string,
    moves: [string, string][],
  ): Promise<Record<string, string> | undefined> {
    const container = pod.spec?.containers.find((c) => c.name === containerName);
    const vars = (container?.env ?? []).filter((e) => only.test(e.name));
    if (vars.length === 0) return {};
    for (const { caVolume: volumeName, caMountPath } of [ownRepository, sourceRepository]) {
      const caVolume = pod.spec?.volumes?.find((v) => v.name === volumeName)?.secret;
      if (!caVolume?.secretName) continue;
      const secret = await this.#client.find(builtin.secrets, caVolume.secretName, this.#namespace);
      if (!secret) return undefined;
      const caDir = join(this.bed.root, `${volumePrefix}-${volumeName}`);
      mkdirSync(caDir, { recursive: true });
      chmodSync(caDir, 0o755);
      for (const item of caVolume.items ?? []) {
        const file = join(caDir, item.path);
        writeFileSync(file, Buffer.from(secret.data?.[item.key] ?? '', 'base64'));
        chmodSync(file, 0o644);
      }
      moves = [...moves, [caMountPath, caDir]];
    }
    const inBed = (value: string) => moves.reduce((v, [from, to]) => v.split(from).join(to), value);
    const env: Record<string, string> = {};
    for (const variable of vars) {
      const ref = variable.valueFrom?.secretKeyRef;
      if (!ref) {
        env[variable.name] = inBed(variable.value ?? '');
        continue;
      }
      const secret = ref.name
        ? await this.#client.find(builtin.secrets, ref.name, this.#namespace)
        : undefined;
      const value = secret?.data?.[ref.key];
      if (value === undefined) {
        if (ref.optional) continue;
        return undefined;
      }
      env[variable.name] = Buffer.from(value, 'base64').toString();
    }
    return env;
  }

  /**
   * Starts one of the cluster's run-to-completion pods as its entrypoint would run in it (the
   * kubelet runs it once and reports its end with the termination message): a PostgreSQLBackup's
   * pod (`backup`: the client certificate's Secret written where its volume would be, and each
   * instance its configuration names, by DNS name, port, data and run directories, replaced by
   * where it runs in the bed, as cluster DNS and the pod's mounts would resolve them), a restore
   * drill's (`drill`: its claim and run directory in the bed), and a retention's expire pod
   * (`expire`: the repository alone). undefined while it cannot start yet.
   */
  async #runJob(pod: V1Pod): Promise<Run | undefined> {
    const container = pod.spec?.containers[0];
    const command = container?.command?.[1] ?? '';
    if (command === 'expire' && this.holdExpirePods) return undefined;
    if (command === 'drill' && this.holdDrillPods) return undefined;
    const env =
      command === 'backup'
        ? await this.#backupJobEnvironment(pod)
        : command === 'expire'
          ? await this.#expireJobEnvironment(pod)
          : await this.#drillJobEnvironment(pod);
    if (!env || !container) return undefined;
    const name = pod.metadata?.name ?? '';
    const job = this.bed.runJob(name, [command], env);
    const completion = job.exited.then((code) => ({
      exitCode: typeof code === 'number' ? code : 1,
      message: this.#terminationMessage(name),
    }));
    return { completion, stop: () => job.stop(0) };
  }

  async #backupJobEnvironment(pod: V1Pod): Promise<Record<string, string> | undefined> {
    const name = pod.metadata?.name ?? '';
    const client = await this.#client.find(
      builtin.secrets,
      `${this.#cluster}-backup-client`,
      this.#namespace,
    );
    if (!client) return undefined;
    const text = (key: string) => Buffer.from(client.data?.[key] ?? '', 'base64').toString();
    const clientDir = this.bed.writeSecretVolume(`${name}-client-tls`, {
      'tls.crt': text('tls.crt'),
      'tls.key': text('tls.key'),
      'ca.crt': text('ca.crt'),
    });
    const env = await this.#resolveEnvironment(pod, 'backup', /./, name, [
      [backupPodPaths.clientTls, clientDir],
      [backupPodPaths.work, join(this.bed.root, name, 'work')],
    ]);
    if (!env?.['PG_BACKREST_CONFIG']) return undefined;
    env['PG_BACKREST_CONFIG'] = this.#instancesInBed(env['PG_BACKREST_CONFIG']);
    return env;
  }

  /** An expire pod (retention's) works on the repository alone: no client certificate, no instance. */
  async #expireJobEnvironment(pod: V1Pod): Promise<Record<string, string> | undefined> {
    const name = pod.metadata?.name ?? '';
    const env = await this.#resolveEnvironment(pod, 'expire', /./, name, [
      [backupPodPaths.work, join(this.bed.root, name, 'work')],
    ]);
    return env?.['PG_BACKREST_CONFIG'] ? env : undefined;
  }

  async #drillJobEnvironment(pod: V1Pod): Promise<Record<string, string> | undefined> {
    const name = pod.metadata?.name ?? '';
    const { dataDir, runDir } = this.bed.instanceDirs(name);
    const env = await this.#resolveEnvironment(pod, 'drill', /./, name, [
      [instancePaths.pgdata, dataDir],
      [instancePaths.run, runDir],
    ]);
    if (!env) return undefined;
    // The bed has one PostgreSQL, whatever major version the pod's image would carry.
    delete env['PG_BIN'];
    env['PGPORT'] = String(await freeLoopbackPort());
    return env;
  }

  /** A backup pod's pgBackRest configuration with each instance where it runs in the bed. */
  #instancesInBed(config: string): string {
    const hosts = new Map<string, string>();
    for (const match of config.matchAll(/^(pg[0-9]+)-host=([^.\n]+)\..*$/gm)) {
      if (match[1] && match[2]) hosts.set(match[1], match[2]);
    }
    return config
      .split('\n')
      .map((line) => {
        const match = /^(pg[0-9]+)-(host|host-port|path|socket-path|port)=/.exec(line);
        const instance = match?.[1] ? hosts.get(match[1]) : undefined;
        if (!match || !instance) return line;
        const running = this.#bed?.instances.get(instance);
        const { dataDir, runDir } = this.bed.instanceDirs(instance);
        const value: Record<string, string> = {
          host: 'localhost',
          'host-port': String(this.#backupServerPorts.get(instance) ?? 1),
          path: dataDir,
          'socket-path': runDir,
          port: String(running?.port ?? 1),
        };
        return `${match[1]}-${match[2] ?? ''}=${value[match[2] ?? ''] ?? ''}`;
      })
      .join('\n');
  }

  async stop(): Promise<void> {
    await this.#kubelet?.stop();
    await this.#rw?.close();
    await this.#bed?.cleanup();
  }

  /** Where a pod's fence annotation is, as its downward API volume gives it (PG_FENCE_FILE). */
  #fenceFile(pod: string): string {
    return join(this.bed.root, `${pod}.fenced`);
  }

  /**
   * Each pod's fence annotation (ADR 0223) as its containers see it: the downward API file
   * updated, a running instance of a pod now fenced stopped fast (the self-fence container's
   * part: pg_ctl stop -m fast), and the waiting container of a pod now unfenced ended, so that
   * the kubelet starts the instance again (in a pod the same container goes on; the entrypoint's
   * own test covers that).
   */
  async #followFences(pods: readonly V1Pod[]): Promise<void> {
    for (const pod of pods) {
      const name = pod.metadata?.name ?? '';
      if (!name || runsToCompletion(pod)) continue;
      const fenced = pod.metadata?.annotations?.[annotationKeys.fenced] === 'true';
      const waiting = this.#fencedContainers.get(name);
      if (fenced) {
        writeFileSync(this.#fenceFile(name), 'true', { mode: 0o644 });
        const running = this.#bed?.instances.get(name);
        if (!waiting && running?.isRunning()) await running.stopFast();
      } else {
        if (waiting?.isRunning()) {
          process.kill(waiting.pid, 'SIGINT');
          await waiting.exited;
        }
        this.#fencedContainers.delete(name);
        writeFileSync(this.#fenceFile(name), '', { mode: 0o644 });
      }
    }
  }

  /** A fenced pod's container: the entrypoint, which starts nothing while the fence lasts. */
  async #startFenced(name: string, role: string): Promise<Container> {
    writeFileSync(this.#fenceFile(name), 'true', { mode: 0o644 });
    const waiting = await this.bed.runEntrypoint(name, {
      role: role === 'primary' ? 'primary' : 'replica',
      env: { PG_FENCE_FILE: this.#fenceFile(name) },
    });
    this.#fencedContainers.set(name, waiting);
    this.starts.push({ pod: name, role: `${role} (fenced)` });
    return {
      process: {
        exited: waiting.exited,
        isRunning: () => waiting.isRunning(),
        stop: async () => {
          if (waiting.isRunning()) process.kill(waiting.pid, 'SIGKILL');
          await waiting.exited;
        },
      },
      ready: () => Promise.resolve(false),
      terminationMessage: () => Promise.resolve(this.#terminationMessage(name)),
      podIP: '127.0.0.1',
    };
  }

  /** kube-proxy: the read-write Service follows the primary label, among running instances. */
  #followPrimary(pods: readonly V1Pod[]): void {
    const primary = pods.find(
      (p) =>
        p.metadata?.labels?.[labelKeys.role] === 'primary' &&
        this.#kubelet?.container(p.metadata.name ?? '')?.process.isRunning(),
    );
    const target = primary?.metadata?.name ?? '';
    if (target === this.#rwTarget) return;
    this.#rwTarget = target;
    if (target) {
      const endpoint = this.endpoint(target);
      this.#rw?.retarget(endpoint.port, endpoint.host);
    } else {
      this.#rw?.cut();
    }
  }

  /**
   * Starts the instance of `pod` once it can: undefined while a replica has no primary to start
   * from or a Secret it mounts is missing; a start that fails is the entrypoint's exit.
   */
  async #startInstance(pod: V1Pod): Promise<Container | undefined> {
    const name = pod.metadata?.name ?? '';
    const target = this.#rwTarget;
    const role = pod.metadata?.annotations?.[annotationKeys.instanceRole] ?? '';
    if (pod.metadata?.annotations?.[annotationKeys.fenced] === 'true') return this.#startFenced(name, role);
    // What the operator decided at the pod's creation, as the container's environment gives it.
    const env = (key: string) =>
      pod.spec?.containers.find((c) => c.name === 'postgres')?.env?.find((e) => e.name === key)?.value;
    const initdb = env('PG_INITDB');
    const parameters = [this.#parameters, env('PG_PARAMETERS')].filter(Boolean).join('\n');
    // A replica starts from the read-write Service; the entrypoint would wait for it. One on data
    // an earlier cluster left starts before there is a primary: it is given the Service itself
    // (cut while no pod is labelled primary), as PRIMARY_HOST names it in a pod.
    const retained = env('PG_RETAINED') === 'true';
    const upstream =
      target && target !== name
        ? this.endpoint(target)
        : retained && this.#rw
          ? { name: 'rw', host: '127.0.0.1', port: this.#rw.port }
          : undefined;
    if (role !== 'primary' && !upstream) return undefined;
    if (!(await this.#mountCurrentSecrets())) return undefined;
    const backupEnv = await this.#backupEnvironment(pod, name);
    if (!backupEnv) return undefined;
    this.starts.push({ pod: name, role });
    let instance: TestInstance;
    try {
      instance = await this.bed.start(name, {
        role: role === 'primary' ? 'primary' : 'replica',
        ...(upstream ? { primary: upstream } : {}),
        ...(parameters ? { parameters } : {}),
        // The server certificate's volume, as the pod spec mounts it (a pod made before TLS has none).
        ...(this.#tls && pod.spec?.volumes?.some((v) => v.name === tlsVolume) ? { tls: this.#tls } : {}),
        ...(this.#app
          ? {
              app: {
                username: this.#app.user,
                password: this.#app.password,
                database: env('PG_APP_DATABASE') ?? 'app',
              },
            }
          : {}),
        env: {
          ...backupEnv,
          ...(initdb ? { PG_INITDB: initdb } : {}),
          ...(retained ? { PG_RETAINED: 'true' } : {}),
        },
      });
    } catch (error) {
      console.warn(`pod-processes: ${name} did not start: ${String(error)}`);
      const code = await this.bed.instances.get(name)?.process.exited;
      throw new ContainerFailure(typeof code === 'number' ? code : 1, this.#terminationMessage(name));
    }
    return {
      // Killed as a container is: every process of the instance at once.
      process: {
        exited: instance.process.exited,
        isRunning: () => instance.isRunning(),
        stop: () => instance.kill9(),
      },
      ready: () => Promise.resolve(instance.isRunning()),
      terminationMessage: () => Promise.resolve(this.#terminationMessage(name)),
      podIP: '127.0.0.1',
    };
  }

  #terminationMessage(name: string): string {
    const file = this.bed.terminationLog(name);
    return existsSync(file) ? readFileSync(file, 'utf8').trim() : '';
  }
}
