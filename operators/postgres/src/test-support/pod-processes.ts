// What a kubelet and kube-proxy would do for one PostgreSQLCluster's pods, with real PostgreSQL
// processes on loopback, so the operator's failover can be tested against a real API server and
// real databases without a node: each pod the operator creates is started through the production
// entrypoint in the role its annotation says (as the downward API would give it), with the pod's
// PG_PARAMETERS and PG_APP_DATABASE, its archiving environment (spec.backup: Secret references
// resolved, the CA written out) and the cluster's Secrets mounted, restarted when its process
// dies while the pod exists (a start that fails is reported as a kubelet does: the termination
// message in the container's lastState, CrashLoopBackOff, a retry after a back-off), and killed
// when the pod is deleted; the read-write "Service" is a TCP proxy to the running instance
// labelled primary, cut when there is none.
import { setTimeout as sleep } from 'node:timers/promises';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { V1ContainerStatus, V1Pod, V1Secret } from '@kubernetes/client-node';
import { builtin, type KubeClient } from '@homeostat/reconcile';
import {
  freeLoopbackPort,
  startTcpProxy,
  waitUntil,
  type ManagedProcess,
  type TcpProxy,
} from '@homeostat/testing';
import type { Credentials, InstanceEndpoint } from '../instance/instance.ts';
import { secretNames, tlsSecretNames } from '../controllers/cluster-names.ts';
import { backupPodPaths, backupPodSelector } from '../controllers/backup/backup-pod.ts';
import { drillLabel, drillSelector } from '../controllers/backup/drill-pod.ts';
import { expirePodSelector } from '../controllers/backup/expire-pod.ts';
import { ownRepository } from '../controllers/desired-backup.ts';
import { sourceRepository } from '../controllers/desired-recovery.ts';
import { instancePaths, tlsVolume } from '../controllers/desired-pod.ts';
import { annotationKeys, labelKeys } from '../controllers/operand-labels.ts';
import { PostgresTestBed, type TestInstance } from './postgres-processes.ts';

interface Running {
  /** The pod's uid: a new pod of the same name is a new container. */
  readonly uid: string;
  instance?: TestInstance;
  starting?: Promise<void> | undefined;
  /** Failed starts so far (the container's restartCount), and when the next may begin. */
  failures: number;
  retryAt: number;
}

// How long a kubelet's crash-loop back-off keeps a failed container down, shortened for tests.
const crashBackoffMs = 1000;

export class PodProcesses {
  readonly #client: KubeClient;
  readonly #namespace: string;
  readonly #cluster: string;
  readonly #parameters: string | undefined;
  readonly #running = new Map<string, Running>();
  #bed: PostgresTestBed | undefined;
  #app: Credentials | undefined;
  #tls: { certificate: string; privateKey: string; ca: string } | undefined;
  #rw: TcpProxy | undefined;
  #rwTarget = '';
  #loop: Promise<void> | undefined;
  #stopping = false;
  /** The loopback port of each instance's pgBackRest TLS server. */
  readonly #backupServerPorts = new Map<string, number>();
  /** Run-to-completion pods (backups, drills) running, by uid, and those that ended. */
  readonly #jobs = new Map<string, ManagedProcess>();
  readonly #jobsDone = new Set<string>();
  /**
   * While true, expire pods are left unstarted, as a slow kubelet leaves them: what a test changes
   * meanwhile (a Secret) is what the pod starts with.
   */
  holdExpirePods = false;
  /**
   * Pods whose node is down, by name (stopNode): their container is killed and none of a pod of
   * that name starts again, as a pod bound to a stopped node by its volume stays unstarted.
   */
  readonly #downNodes = new Set<string>();
  /** Every start: pod name, role, for assertions. */
  readonly starts: { pod: string; role: string }[] = [];

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

  /** The node of `pod` stops, as a machine failing: its postgres dies and never starts again here. */
  stopNode(pod: string): void {
    this.#downNodes.add(pod);
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
    this.#loop = (async () => {
      while (!this.#stopping) {
        try {
          await this.#sync();
          await this.#syncJobPods();
        } catch (error) {
          console.warn(`pod-processes: ${String(error)}`);
        }
        await sleep(100);
      }
    })();
  }

  #containerStatus(record: Running): V1ContainerStatus {
    return { name: 'postgres', image: 'postgres', imageID: '', ready: false, restartCount: record.failures };
  }

  /** As a kubelet reports a container that exited with an error: its termination message, backing off. */
  async #reportCrash(name: string, record: Running): Promise<void> {
    const code = await this.bed.instances.get(name)?.process.exited;
    record.failures += 1;
    record.retryAt = Date.now() + crashBackoffMs;
    const file = this.bed.terminationLog(name);
    const message = existsSync(file) ? readFileSync(file, 'utf8').trim() : '';
    await this.#client
      .patchStatus(builtin.pods, name, this.#namespace, {
        phase: 'Running',
        conditions: [{ type: 'Ready', status: 'False', lastTransitionTime: new Date().toISOString() }],
        containerStatuses: [
          {
            ...this.#containerStatus(record),
            state: {
              waiting: { reason: 'CrashLoopBackOff', message: 'back-off restarting failed container' },
            },
            lastState: {
              terminated: {
                exitCode: typeof code === 'number' ? code : 1,
                reason: 'Error',
                ...(message ? { message } : {}),
                finishedAt: new Date(),
              },
            },
          },
        ],
      })
      .catch((error: unknown) =>
        console.warn(`pod-processes: ${name}: status not written: ${String(error)}`),
      );
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
   * Runs the cluster's run-to-completion pods as their entrypoint would run in them, once each,
   * and reports each end as a kubelet does (phase Succeeded or Failed, the termination message):
   * a PostgreSQLBackup's pod (`backup`: the client certificate's Secret written where its volume
   * would be, and each instance its configuration names, by DNS name, port, data and run
   * directories, replaced by where it runs in the bed, as cluster DNS and the pod's mounts would
   * resolve them), a restore drill's (`drill`: its claim and run directory in the bed), and a
   * retention's expire pod (`expire`: the repository alone).
   */
  async #syncJobPods(): Promise<void> {
    const list = (selector: string) =>
      this.#client.list(builtin.pods, { namespace: this.#namespace, labelSelector: selector });
    const pods = [
      ...(await list(`${backupPodSelector},app.kubernetes.io/instance=${this.#cluster}`)).items,
      ...(await list(`${drillSelector},${drillLabel}=${this.#cluster}`)).items,
      ...(await list(`${expirePodSelector},app.kubernetes.io/instance=${this.#cluster}`)).items,
    ];
    const live = new Set(pods.map((p) => p.metadata?.uid ?? ''));
    for (const [uid, job] of this.#jobs) {
      if (live.has(uid)) continue;
      void job.stop(0);
      this.#jobs.delete(uid);
    }
    for (const pod of pods) {
      const uid = pod.metadata?.uid ?? '';
      if (this.#jobs.has(uid) || this.#jobsDone.has(uid) || pod.metadata?.deletionTimestamp) continue;
      const container = pod.spec?.containers[0];
      const command = container?.command?.[1] ?? '';
      if (command === 'expire' && this.holdExpirePods) continue;
      const env =
        command === 'backup'
          ? await this.#backupJobEnvironment(pod)
          : command === 'expire'
            ? await this.#expireJobEnvironment(pod)
            : await this.#drillJobEnvironment(pod);
      if (!env || !container) continue;
      this.#startJob(pod, container.name, command, env);
    }
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

  #startJob(pod: V1Pod, container: string, command: string, env: Record<string, string>): void {
    const uid = pod.metadata?.uid ?? '';
    const name = pod.metadata?.name ?? '';
    const job = this.bed.runJob(name, [command], env);
    this.#jobs.set(uid, job);
    void job.exited.then(async (code) => {
      this.#jobs.delete(uid);
      this.#jobsDone.add(uid);
      const file = this.bed.terminationLog(name);
      const message = existsSync(file) ? readFileSync(file, 'utf8') : '';
      await this.#client
        .patchStatus(builtin.pods, name, this.#namespace, {
          phase: code === 0 ? 'Succeeded' : 'Failed',
          containerStatuses: [
            {
              name: container,
              image: 'postgres',
              imageID: '',
              ready: false,
              restartCount: 0,
              state: {
                terminated: {
                  exitCode: typeof code === 'number' ? code : 1,
                  reason: code === 0 ? 'Completed' : 'Error',
                  ...(message ? { message } : {}),
                  finishedAt: new Date(),
                },
              },
            },
          ],
        })
        .catch((error: unknown) =>
          console.warn(`pod-processes: ${name}: status not written: ${String(error)}`),
        );
    });
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
    this.#stopping = true;
    await this.#loop;
    await Promise.all([...this.#running.values()].map((r) => r.starting));
    await Promise.all([...this.#jobs.values()].map((job) => job.stop(0)));
    await this.#rw?.close();
    await this.#bed?.cleanup();
  }

  async #sync(): Promise<void> {
    const pods = (
      await this.#client.list(builtin.pods, {
        namespace: this.#namespace,
        labelSelector: `${labelKeys.cluster}=${this.#cluster}`,
      })
    ).items.filter((p) => !p.metadata?.deletionTimestamp);
    const live = new Map(pods.map((p) => [p.metadata?.name ?? '', p]));

    // Deleted pods: their containers are killed (one still starting, once it has started).
    for (const [name, running] of this.#running) {
      const nodeDown = this.#downNodes.has(name);
      if ((!nodeDown && live.get(name)?.metadata?.uid === running.uid) || running.starting) continue;
      await running.instance?.kill9();
      this.#running.delete(name);
    }

    // kube-proxy: the read-write Service follows the primary label, among running instances.
    const primary = pods.find(
      (p) =>
        p.metadata?.labels?.[labelKeys.role] === 'primary' &&
        this.#running.get(p.metadata?.name ?? '')?.instance?.isRunning(),
    );
    const target = primary?.metadata?.name ?? '';
    if (target !== this.#rwTarget) {
      this.#rwTarget = target;
      if (target) {
        const endpoint = this.endpoint(target);
        this.#rw?.retarget(endpoint.port, endpoint.host);
      } else {
        this.#rw?.cut();
      }
    }

    for (const pod of pods) {
      const name = pod.metadata?.name ?? '';
      const uid = pod.metadata?.uid ?? '';
      if (this.#downNodes.has(name)) continue;
      const running = this.#running.get(name);
      if (running?.starting || (running?.uid === uid && running.instance?.isRunning())) continue;
      if (running?.uid === uid && Date.now() < running.retryAt) continue;
      if (running && running.uid !== uid) continue; // the old pod's process goes first (above)
      const role = pod.metadata?.annotations?.[annotationKeys.instanceRole] ?? '';
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
      if (role !== 'primary' && !upstream) continue;
      if (!(await this.#mountCurrentSecrets())) continue;
      const backupEnv = await this.#backupEnvironment(pod, name);
      if (!backupEnv) continue;
      const record: Running = running?.uid === uid ? running : { uid, failures: 0, retryAt: 0 };
      this.#running.set(name, record);
      this.starts.push({ pod: name, role });
      record.starting = this.bed
        .start(name, {
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
        })
        .then(async (instance) => {
          record.instance = instance;
          await this.#client
            .patchStatus(builtin.pods, name, this.#namespace, {
              phase: 'Running',
              podIP: '127.0.0.1',
              conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: new Date().toISOString() }],
              containerStatuses: [
                {
                  ...this.#containerStatus(record),
                  ready: true,
                  state: { running: { startedAt: new Date() } },
                },
              ],
            })
            .catch(() => undefined);
        })
        .catch(async (error: unknown) => {
          console.warn(`pod-processes: ${name} did not start: ${String(error)}`);
          await this.#reportCrash(name, record);
        })
        .finally(() => {
          record.starting = undefined;
        });
    }
  }
}
