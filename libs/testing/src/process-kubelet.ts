// A stand-in kubelet for controller tests: the test control plane has no node, so nothing would
// ever run the pods an operator creates. This one runs them as processes on this machine.
//
// What the kubelet does (here, for every operator):
// - polls the pods its selectors match and works on each pod by uid, apart from the others (one
//   pod that cannot start does not hold the rest back): a pod of the same name made again is a new
//   pod, started only once the old one's container is gone;
// - makes a pod's sandbox once (the runtime's init containers, volumes), then starts its main
//   container; restarts it when it exits while the pod exists (restartPolicy Always), counting
//   restartCount and keeping its end as lastState; reports a start that fails as the kubelet does
//   (the exit code and termination message in lastState, waiting CrashLoopBackOff) and backs off
//   before the next; restarts it when the pod's image changes, as the kubelet restarts a
//   container whose image was patched;
// - probes readiness each sync and writes the pod's status when it changes (phase Running, the
//   Ready condition, the container's status with restartCount, startedAt and lastState);
// - runs a run-to-completion pod once and writes its end (phase Succeeded or Failed, the
//   container's exit code and termination message);
// - stops a pod's processes when the pod is deleted, and on stopNode (a node that went down: no
//   pod of that name starts here again), and makes a pod's sandbox again on reboot (init
//   containers again; the restart count goes on);
// - writes a pod's Secret volumes as files on request and refreshes them while it runs, all files
//   of a volume swapped at once, as the kubelet's atomic writer does;
// - releases a deleted claim once no pod uses it (what the kube-controller-manager's
//   pvc-protection controller does), when the runtime keeps volumes.
//
// What a runtime supplies (per operator): whether a pod runs to completion; how to make a pod's
// sandbox and start its main container as a process (from the pod's own command line, so what the
// operator writes is what is tested) and how to tell that container's readiness; how to run a
// run-to-completion pod; and, when it keeps claims' volumes, how to drop one.
import { mkdir, readlink, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type {
  V1ContainerStateTerminated,
  V1PersistentVolumeClaim,
  V1Pod,
  V1PodStatus,
  V1Secret,
} from '@kubernetes/client-node';

/** What the kubelet needs from the API server, in one namespace (an operator adapts its client). */
export interface KubeletApi {
  listPods(labelSelector: string): Promise<V1Pod[]>;
  listClaims(labelSelector: string): Promise<V1PersistentVolumeClaim[]>;
  findSecret(name: string): Promise<V1Secret | undefined>;
  patchPodStatus(pod: string, status: V1PodStatus): Promise<void>;
  /** Removes a claim's finalizers (pvc-protection's, once no pod uses it). */
  releaseClaim(claim: string): Promise<void>;
}

/** A process the kubelet watches and stops (ManagedProcess is one). */
export interface ContainerProcess {
  readonly exited: Promise<number | string | null>;
  isRunning(): boolean;
  stop(graceMs?: number): Promise<void>;
}

/** A started main container. */
export interface Container {
  readonly process: ContainerProcess;
  /** The readiness probe, asked each sync while the process runs. */
  ready(): Promise<boolean>;
  /** The termination message once the process has exited (the termination-log file). */
  terminationMessage?(): Promise<string>;
  /** The pod's IP, when its address is to be reported. */
  readonly podIP?: string;
}

/** A pod's sandbox: what outlives a container's restarts. */
export interface Sandbox {
  /**
   * Starts the main container from `image`: undefined while it cannot start yet (the next sync
   * asks again); a ContainerFailure (or any error) is a failed start, reported and backed off.
   * `pod` is the pod as it is now, not as the sandbox was made: what a downward API volume gives
   * a restarted container (its annotations) follows the pod.
   */
  startContainer(image: string, pod: V1Pod): Promise<Container | undefined>;
}

/** A run-to-completion pod's run. */
export interface Run {
  readonly completion: Promise<Completion>;
  /** Kills what the run still has running (the pod was deleted). */
  stop(): Promise<void>;
}

export interface Completion {
  readonly exitCode: number;
  readonly message?: string;
  /** The whole status to write instead of the one made from exitCode and message. */
  readonly status?: V1PodStatus;
}

/** Helpers the kubelet gives a runtime for one pod. */
export interface PodContext {
  /** Writes the pod's Secret volumes (of its first container) as files: mount path → directory. */
  mountSecrets(): Promise<Map<string, string>>;
}

export interface PodRuntime {
  /** Whether the pod runs once to its end rather than being kept running. */
  runsToCompletion(pod: V1Pod): boolean;
  /**
   * Makes the pod's sandbox (init containers, volumes): undefined, or an error, while it cannot
   * yet; the next sync tries again.
   */
  createSandbox(pod: V1Pod, context: PodContext): Promise<Sandbox | undefined>;
  /** Starts a run-to-completion pod: undefined while it cannot start yet (or is held). */
  run(pod: V1Pod, context: PodContext): Promise<Run | undefined>;
  /** Each sync, the live pods, before any starts (what a kube-proxy would follow). */
  observe?(pods: readonly V1Pod[]): Promise<void>;
  /** Drops a released claim's volume; without it claims are left alone. */
  removeVolume?(claim: string): Promise<void>;
}

/** A start that failed as a container exits: its exit code and termination message. */
export class ContainerFailure extends Error {
  readonly exitCode: number;
  readonly terminationMessage: string;
  constructor(exitCode: number, terminationMessage: string) {
    super(`container exited with code ${exitCode}: ${terminationMessage}`);
    this.exitCode = exitCode;
    this.terminationMessage = terminationMessage;
  }
}

export interface ProcessKubeletOptions {
  readonly api: KubeletApi;
  readonly runtime: PodRuntime;
  /** The pods (and claims) this node runs. */
  readonly selectors: readonly string[];
  /** Where Secret volumes are written. */
  readonly workDir: string;
  /** How long a container stays down after a failed start (the kubelet's crash-loop back-off). */
  readonly crashBackoffMs?: number;
  readonly intervalMs?: number;
  /** How long a stopped container gets between SIGTERM and SIGKILL. */
  readonly stopGraceMs?: number;
}

interface Terminated {
  readonly exitCode: number;
  readonly message: string;
  readonly finishedAt: Date;
}

interface PodRecord {
  readonly uid: string;
  readonly name: string;
  pod: V1Pod;
  sandbox?: Sandbox;
  container?: Container | undefined;
  image: string;
  restarts: number;
  startedAt: string;
  /** The readiness last written, undefined before the first report of this container. */
  ready: boolean | undefined;
  lastTerminated?: Terminated;
  retryAt: number;
  /** A sync of this pod in progress (a start can take a while). */
  busy?: Promise<void> | undefined;
  mountsSecrets: boolean;
}

const mainContainer = (pod: V1Pod) => pod.spec?.containers[0];
const claimsOf = (pod: V1Pod) =>
  (pod.spec?.volumes ?? []).flatMap((v) =>
    v.persistentVolumeClaim ? [v.persistentVolumeClaim.claimName] : [],
  );

export class ProcessKubelet {
  readonly #api: KubeletApi;
  readonly #runtime: PodRuntime;
  readonly #selectors: readonly string[];
  readonly #workDir: string;
  readonly #backoffMs: number;
  readonly #intervalMs: number;
  readonly #graceMs: number;
  readonly #pods = new Map<string, PodRecord>();
  /** Run-to-completion pods started, by uid, until the pod is deleted (a run may leave processes). */
  readonly #runs = new Map<string, Promise<Run | undefined>>();
  readonly #downNodes = new Set<string>();
  readonly #reboots = new Set<string>();
  /** A rebooted pod's restart count, carried to its new sandbox (the kubelet counts it on). */
  readonly #restartsAfterReboot = new Map<string, number>();
  /** Secret volume directory → the resourceVersion of the Secret written there. */
  readonly #secretVersions = new Map<string, string>();
  #secretWrites = 0;
  #secretsRefreshedAt = 0;
  #timer: NodeJS.Timeout | undefined;
  #tick: Promise<void> = Promise.resolve();
  #stopped = false;
  /** When the last sync began and ended, and its error (a stuck or failing kubelet shows here). */
  #lastSync: { began?: string; ended?: string; error?: string } = {};

  constructor(options: ProcessKubeletOptions) {
    this.#api = options.api;
    this.#runtime = options.runtime;
    this.#selectors = options.selectors;
    this.#workDir = options.workDir;
    this.#backoffMs = options.crashBackoffMs ?? 0;
    this.#intervalMs = options.intervalMs ?? 200;
    this.#graceMs = options.stopGraceMs ?? 2000;
  }

  start(intervalMs = this.#intervalMs): void {
    const loop = () => {
      if (this.#stopped) return;
      const began = new Date().toISOString();
      this.#lastSync = { ...this.#lastSync, began };
      this.#tick = this.#sync()
        .then(
          () => {
            this.#lastSync = { began, ended: new Date().toISOString() };
          },
          (error: unknown) => {
            this.#lastSync = { began, ended: new Date().toISOString(), error: String(error) };
          },
        )
        .finally(() => {
          if (!this.#stopped) this.#timer = setTimeout(loop, intervalMs);
        });
    };
    loop();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#tick;
    await Promise.all([...this.#pods.values()].map((r) => r.busy));
    const runs = await Promise.all(this.#runs.values());
    await Promise.all(runs.map((run) => run?.stop()));
    await Promise.all([...this.#pods.values()].map((r) => r.container?.process.stop(this.#graceMs)));
    this.#pods.clear();
    this.#runs.clear();
  }

  /** The pods whose main container runs now, by name. */
  runningPods(): string[] {
    return [...this.#pods.values()].filter((r) => r.container?.process.isRunning()).map((r) => r.name);
  }

  /** The container of pod `name` as started, if it has one. */
  container(name: string): Container | undefined {
    return [...this.#pods.values()].find((r) => r.name === name)?.container;
  }

  /** Kills a pod's main container as a crash would (SIGKILL); it is restarted while the pod exists. */
  async crash(name: string): Promise<void> {
    await this.container(name)?.process.stop(0);
  }

  /** The node of pod `name` goes down: its processes die and no pod of that name starts here again. */
  stopNode(name: string): void {
    this.#downNodes.add(name);
  }

  /** Makes a pod's sandbox again at the next sync, as after a node reboot (init containers again). */
  reboot(name: string): void {
    this.#reboots.add(name);
  }

  /** What the kubelet holds now, for a failed test's report. */
  describe(): Record<string, unknown> {
    return {
      lastSync: this.#lastSync,
      pendingReboots: [...this.#reboots],
      downNodes: [...this.#downNodes],
      pods: [...this.#pods.values()].map((r) => ({
        pod: r.name,
        uid: r.uid,
        running: r.container?.process.isRunning() ?? false,
        ready: r.ready,
        startedAt: r.startedAt,
        restarts: r.restarts,
        image: r.image,
      })),
      runs: [...this.#runs.keys()],
    };
  }

  async #sync(): Promise<void> {
    const lists = await Promise.all(this.#selectors.map((s) => this.#api.listPods(s)));
    const live = new Map<string, V1Pod>();
    for (const pod of lists.flat()) {
      if (!pod.metadata?.deletionTimestamp) live.set(pod.metadata?.uid ?? '', pod);
    }
    await this.#removeGone(live);
    await this.#runtime.observe?.([...live.values()]);
    for (const [uid, pod] of live) {
      const name = pod.metadata?.name ?? '';
      if (this.#downNodes.has(name)) continue;
      if (this.#runtime.runsToCompletion(pod)) this.#startRun(uid, pod);
      else this.#syncPod(uid, pod);
    }
    await this.#refreshSecrets();
    await Promise.all([...this.#pods.values()].map((r) => this.#reportReadiness(r)));
    if (this.#runtime.removeVolume) await this.#releaseClaims([...live.values()]);
  }

  /** Stops the processes of deleted pods, of pods on a node that went down, and of rebooted ones. */
  async #removeGone(live: ReadonlyMap<string, V1Pod>): Promise<void> {
    for (const [uid, record] of this.#pods) {
      if (record.busy) continue; // once its start has ended
      const gone = !live.has(uid) || this.#downNodes.has(record.name);
      const reboot = !gone && this.#reboots.delete(record.name);
      if (!gone && !reboot) continue;
      await record.container?.process.stop(this.#graceMs);
      this.#pods.delete(uid);
      if (reboot) {
        this.#restartsAfterReboot.set(record.name, record.restarts + 1);
        record.container = undefined;
        await this.#writeStatus(record, false);
      }
    }
    for (const [uid, run] of this.#runs) {
      if (live.has(uid)) continue;
      this.#runs.delete(uid);
      await (await run)?.stop();
    }
  }

  #context(record: { uid: string; pod: V1Pod; mountsSecrets?: boolean }): PodContext {
    return {
      mountSecrets: () => {
        record.mountsSecrets = true;
        return this.#secretVolumes(record.uid, record.pod, true);
      },
    };
  }

  #syncPod(uid: string, pod: V1Pod): void {
    let record = this.#pods.get(uid);
    if (!record) {
      const name = pod.metadata?.name ?? '';
      // The old pod's container goes first, as a new pod of the same name needs its volumes.
      if ([...this.#pods.values()].some((r) => r.name === name)) return;
      record = {
        uid,
        name,
        pod,
        image: '',
        restarts: this.#restartsAfterReboot.get(name) ?? 0,
        startedAt: '',
        ready: undefined,
        retryAt: 0,
        mountsSecrets: false,
      };
      this.#restartsAfterReboot.delete(name);
      this.#pods.set(uid, record);
    }
    record.pod = pod;
    if (record.busy || Date.now() < record.retryAt) return;
    const current = record;
    current.busy = this.#advance(current).finally(() => {
      current.busy = undefined;
    });
  }

  /** One step of a pod towards its main container running on the pod's image. */
  async #advance(record: PodRecord): Promise<void> {
    try {
      if (!record.sandbox) {
        const sandbox = await this.#runtime.createSandbox(record.pod, this.#context(record));
        if (!sandbox) return;
        record.sandbox = sandbox;
      }
      const image = mainContainer(record.pod)?.image ?? '';
      const container = record.container;
      if (container?.process.isRunning()) {
        if (image === record.image) return;
        await container.process.stop(this.#graceMs);
        record.container = undefined;
        record.restarts++;
        // A restarting container is not Ready until its probe passes again.
        await this.#writeStatus(record, false);
      } else if (container) {
        const code = await container.process.exited;
        const message = (await container.terminationMessage?.().catch(() => '')) ?? '';
        record.container = undefined;
        // A container that ran is started again at once (the kubelet's back-off begins at zero):
        // a killed instance's first restart is what most tests wait for.
        this.#exited(record, typeof code === 'number' ? code : 1, message);
      }
      let started: Container | undefined;
      try {
        started = await record.sandbox.startContainer(image, record.pod);
      } catch (error) {
        const failure = error instanceof ContainerFailure ? error : new ContainerFailure(1, String(error));
        this.#exited(record, failure.exitCode, failure.terminationMessage);
        record.retryAt = Date.now() + this.#backoffMs;
        await this.#writeCrash(record);
        return;
      }
      if (!started) return;
      record.container = started;
      record.image = image;
      record.startedAt = new Date().toISOString();
      record.ready = undefined;
    } catch {
      // Whatever stopped this step is tried again at the next sync.
    }
  }

  /** Counts an exit of the container, kept as its lastState. */
  #exited(record: PodRecord, exitCode: number, message: string): void {
    record.restarts++;
    record.lastTerminated = { exitCode, message, finishedAt: new Date() };
  }

  #startRun(uid: string, pod: V1Pod): void {
    if (this.#runs.has(uid)) return;
    const run = this.#runtime.run(pod, this.#context({ uid, pod })).catch(() => undefined);
    this.#runs.set(uid, run);
    void run.then((started) => {
      if (!started) {
        // Not startable yet: asked again at the next sync.
        if (this.#runs.get(uid) === run) this.#runs.delete(uid);
        return;
      }
      void started.completion
        .then(async (completion) => {
          if (this.#runs.get(uid) !== run) return; // deleted meanwhile
          await this.#api.patchPodStatus(
            pod.metadata?.name ?? '',
            completion.status ?? completed(pod, completion),
          );
        })
        .catch(() => undefined);
    });
  }

  async #reportReadiness(record: PodRecord): Promise<void> {
    const container = record.container;
    if (!container || record.busy) return;
    let ready = false;
    if (container.process.isRunning()) ready = await container.ready().catch(() => false);
    if (ready === record.ready) return;
    await this.#writeStatus(record, ready);
  }

  async #writeStatus(record: PodRecord, ready: boolean): Promise<void> {
    const main = mainContainer(record.pod);
    const podIP = record.container?.podIP;
    await this.#api.patchPodStatus(record.name, {
      phase: 'Running',
      ...(podIP ? { podIP } : {}),
      conditions: [{ type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: new Date() }],
      containerStatuses: [
        {
          name: main?.name ?? '',
          image: record.image || (main?.image ?? ''),
          imageID: '',
          ready,
          restartCount: record.restarts,
          state: { running: { startedAt: new Date(record.startedAt || Date.now()) } },
          ...lastState(record),
        },
      ],
    });
    record.ready = ready;
  }

  /** As the kubelet reports a container that exited with an error: its end, backing off. */
  async #writeCrash(record: PodRecord): Promise<void> {
    const main = mainContainer(record.pod);
    record.ready = false;
    await this.#api
      .patchPodStatus(record.name, {
        phase: 'Running',
        conditions: [{ type: 'Ready', status: 'False', lastTransitionTime: new Date() }],
        containerStatuses: [
          {
            name: main?.name ?? '',
            image: main?.image ?? '',
            imageID: '',
            ready: false,
            restartCount: record.restarts,
            state: {
              waiting: { reason: 'CrashLoopBackOff', message: 'back-off restarting failed container' },
            },
            ...lastState(record),
          },
        ],
      })
      .catch(() => undefined);
  }

  /**
   * Writes the pod's Secret volumes out as files (again only where the Secret changed since);
   * returns mount path → local directory. A Secret that cannot be read keeps its files, as the
   * kubelet keeps a mounted Secret that was deleted, except on the pod's first start.
   */
  async #secretVolumes(uid: string, pod: V1Pod, starting: boolean): Promise<Map<string, string>> {
    const mounts = new Map<string, string>();
    for (const volume of pod.spec?.volumes ?? []) {
      const secretName = volume.secret?.secretName;
      const mount = mainContainer(pod)?.volumeMounts?.find((m) => m.name === volume.name);
      if (!secretName || !mount) continue;
      const dir = join(this.#workDir, `${pod.metadata?.name ?? ''}-${uid.slice(0, 8)}`, volume.name);
      mounts.set(mount.mountPath, dir);
      const secret = await this.#api.findSecret(secretName).catch(() => undefined);
      if (!secret && starting) throw new Error(`Secret ${secretName} not found`);
      const version = secret?.metadata?.resourceVersion ?? '';
      if (!secret || this.#secretVersions.get(dir) === version) continue;
      await this.#swapFiles(dir, secret.data ?? {});
      this.#secretVersions.set(dir, version);
    }
    return mounts;
  }

  /** The kubelet's atomic writer: the files in a new directory, then `dir` (a link) turned to it. */
  async #swapFiles(dir: string, data: Record<string, string>): Promise<void> {
    const next = `${dir}..${++this.#secretWrites}`;
    await mkdir(next, { recursive: true, mode: 0o700 });
    for (const [key, value] of Object.entries(data)) {
      await writeFile(join(next, key), Buffer.from(value, 'base64'), { mode: 0o600 });
    }
    const previous = await readlink(dir).catch(() => undefined);
    await symlink(next, `${next}.link`);
    await rename(`${next}.link`, dir);
    if (previous) await rm(previous, { recursive: true, force: true });
  }

  /** Every second, the Secret volumes of running pods as their Secrets are now. */
  async #refreshSecrets(): Promise<void> {
    if (Date.now() - this.#secretsRefreshedAt < 1000) return;
    this.#secretsRefreshedAt = Date.now();
    for (const record of this.#pods.values()) {
      if (record.mountsSecrets && record.container) await this.#secretVolumes(record.uid, record.pod, false);
    }
  }

  async #releaseClaims(pods: readonly V1Pod[]): Promise<void> {
    const lists = await Promise.all(this.#selectors.map((s) => this.#api.listClaims(s)));
    const inUse = new Set(pods.flatMap(claimsOf));
    for (const claim of lists.flat()) {
      const name = claim.metadata?.name ?? '';
      if (!claim.metadata?.deletionTimestamp || inUse.has(name)) continue;
      await this.#runtime.removeVolume?.(name);
      await this.#api.releaseClaim(name);
    }
  }
}

function lastState(record: PodRecord): { lastState?: { terminated: V1ContainerStateTerminated } } {
  const last = record.lastTerminated;
  if (!last) return {};
  return {
    lastState: {
      terminated: {
        exitCode: last.exitCode,
        reason: 'Error',
        ...(last.message ? { message: last.message } : {}),
        finishedAt: last.finishedAt,
      },
    },
  };
}

/** The status of a run-to-completion pod that ended, as the kubelet reports it. */
function completed(pod: V1Pod, completion: Completion): V1PodStatus {
  const main = mainContainer(pod);
  const { exitCode, message } = completion;
  return {
    phase: exitCode === 0 ? 'Succeeded' : 'Failed',
    containerStatuses: [
      {
        name: main?.name ?? '',
        image: main?.image ?? '',
        imageID: '',
        ready: false,
        restartCount: 0,
        state: {
          terminated: {
            exitCode,
            reason: exitCode === 0 ? 'Completed' : 'Error',
            ...(message ? { message } : {}),
            finishedAt: new Date(),
          },
        },
      },
    ],
  };
}
