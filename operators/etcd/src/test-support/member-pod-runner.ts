// The stand-in kubelet of the etcd controller tests: @homeostat/testing's ProcessKubelet owns the
// pods' lifecycle and status (see process-kubelet.ts); this is its etcd runtime. A member pod runs
// a real etcd process from the pod's own command line (so the flags the operator writes are what
// is tested), with a data directory per claim that outlives the pod, as a volume does, and its
// Secret volumes written out where the flags expect them, after its init containers
// (init-containers.ts); readiness is etcd's /readyz; a changed image runs the etcd release the
// image's tag names (built from the Go module proxy). A run-to-completion backup pod runs its
// agent once (agent-pods.ts), a restore drill's pod its restore, scratch etcd and check
// (drill-pods.ts). A deleted claim's directory goes once no pod uses it.
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import {
  ProcessKubelet,
  etcdBinaryPath,
  etcdVersion,
  httpGet,
  startProcess,
  type Container,
  type ManagedProcess,
  type PodContext,
  type PodRuntime,
  type Run,
  type Sandbox,
} from '@homeostat/testing';
import type { KubeClient } from '@homeostat/reconcile';
import { kubeletApi } from '@homeostat/reconcile/testing';
import { managedSelector } from '../controllers/cluster-names.ts';
import { dataDir } from '../controllers/desired-member-pod.ts';
import { versionOfImage } from '../controllers/rolling-upgrade.ts';
import { isAgentPod, runAgentPod } from './agent-pods.ts';
import { DrillPods, isDrillPod } from './drill-pods.ts';
import { runInitContainers } from './init-containers.ts';

// Faster elections and no fsync: the disk of a test machine is not what these tests are about.
const testFlags = [
  '--unsafe-no-fsync',
  '--heartbeat-interval=100',
  '--election-timeout=1000',
  '--log-level=warn',
];

const claimOf = (pod: V1Pod): string =>
  pod.spec?.volumes?.find((v) => v.persistentVolumeClaim)?.persistentVolumeClaim?.claimName ?? '';

export class MemberPodRunner {
  readonly #client: KubeClient;
  readonly #namespace: string;
  readonly #workDir: string;
  readonly #kubelet: ProcessKubelet;
  /** Restore drill pods: init containers, a scratch etcd and its check (drill-pods.ts). */
  readonly drills: DrillPods;
  /** Every member pod this runner started, in order: what each was made with, after it is gone. */
  readonly #started: V1Pod[] = [];
  /** Images whose container exits as soon as it starts, as a broken image's would. */
  readonly #brokenImages = new Set<string>();

  constructor(client: KubeClient, namespace: string, workDir: string) {
    this.#client = client;
    this.#namespace = namespace;
    this.#workDir = workDir;
    this.drills = new DrillPods(client, namespace, workDir);
    const runtime: PodRuntime = {
      runsToCompletion: (pod) => isDrillPod(pod) || isAgentPod(pod),
      createSandbox: (pod, context) => this.#sandbox(pod, context),
      run: (pod, context) => this.#run(pod, context),
      removeVolume: (claim) => rm(this.volumeDir(claim), { recursive: true, force: true }),
    };
    this.#kubelet = new ProcessKubelet({
      api: kubeletApi(client, namespace),
      runtime,
      selectors: [managedSelector],
      workDir,
    });
  }

  /** The directory that stands for a claim's volume. */
  volumeDir(claim: string): string {
    return join(this.#workDir, claim);
  }

  /** What the runner holds now, for a failed test's report: each pod's process and what it last reported. */
  describe(): Record<string, unknown> {
    return this.#kubelet.describe();
  }

  /** Pods whose etcd runs now, by name. */
  runningPods(): string[] {
    return this.#kubelet.runningPods();
  }

  /**
   * Makes a pod's sandbox again, as the kubelet does after a node reboot: the same pod object, its
   * init containers run again before etcd (and keep it from starting while one fails).
   */
  reboot(pod: string): void {
    this.#kubelet.reboot(pod);
  }

  /** The pods named `name` this runner started, oldest first (a restored member's is made again). */
  startedPods(name: string): V1Pod[] {
    return this.#started.filter((p) => p.metadata?.name === name);
  }

  /**
   * From now on a container started from `image` exits at once with an error (a broken build, a
   * binary for another CPU): the pod crash-loops, as the kubelet would restart it again and again.
   * Containers already running on it go on.
   */
  breakImage(image: string): void {
    this.#brokenImages.add(image);
  }

  /** Kills a pod's etcd as a crash would (SIGKILL); the runner restarts it while the pod exists. */
  async crash(pod: string): Promise<void> {
    await this.#kubelet.crash(pod);
  }

  start(intervalMs = 200): void {
    this.#kubelet.start(intervalMs);
  }

  async stop(): Promise<void> {
    await this.#kubelet.stop();
  }

  async #run(pod: V1Pod, context: PodContext): Promise<Run | undefined> {
    const uid = pod.metadata?.uid ?? '';
    if (isDrillPod(pod)) return this.drills.run(uid, pod, (claim) => this.volumeDir(claim));
    // Mount path → directory of the agent's claim and Secrets.
    const mounts = await context.mountSecrets();
    const claimVolume = pod.spec?.volumes?.find((v) => v.persistentVolumeClaim);
    const mount = pod.spec?.containers[0]?.volumeMounts?.find((m) => m.name === claimVolume?.name);
    if (mount) mounts.set(mount.mountPath, this.volumeDir(claimOf(pod)));
    return { completion: runAgentPod(uid, pod, mounts, this.#workDir), stop: () => Promise.resolve() };
  }

  async #sandbox(pod: V1Pod, context: PodContext): Promise<Sandbox> {
    if (!this.#started.some((p) => p.metadata?.uid === pod.metadata?.uid)) this.#started.push(pod);
    const volume = this.volumeDir(claimOf(pod));
    await mkdir(volume, { recursive: true, mode: 0o700 });
    // A failed init container leaves the pod unstarted: the next sync runs them again.
    await runInitContainers(pod, volume, this.#client, this.#namespace, (claim) => this.volumeDir(claim));
    const args = this.#args(pod, await context.mountSecrets());
    const metricsUrl =
      args.find((a) => a.startsWith('--listen-metrics-urls='))?.slice('--listen-metrics-urls='.length) ?? '';
    const name = pod.metadata?.name ?? '';
    return {
      startContainer: (image): Promise<Container> =>
        Promise.resolve({
          process: this.#spawn(name, args, image),
          ready: async () => (await httpGet(`${metricsUrl}/readyz`)).status === 200,
        }),
    };
  }

  #args(pod: V1Pod, secretDirs: ReadonlyMap<string, string>): string[] {
    const volume = join(this.volumeDir(claimOf(pod)), 'data');
    const local = (arg: string) => {
      if (arg === `--data-dir=${dataDir}`) return `--data-dir=${volume}`;
      let result = arg;
      for (const [mountPath, dir] of secretDirs) result = result.replace(`=${mountPath}/`, `=${dir}/`);
      return result;
    };
    return [...(pod.spec?.containers[0]?.args ?? []).map(local), ...testFlags];
  }

  #spawn(name: string, args: readonly string[], image: string): ManagedProcess {
    if (this.#brokenImages.has(image)) {
      return startProcess({
        name: `broken etcd pod ${name}`,
        command: 'sh',
        args: ['-c', `echo "image ${image} is broken: exiting at once" >&2; exit 1`],
        logFile: join(this.#workDir, `${name}.log`),
      });
    }
    const version = versionOfImage(image);
    return startProcess({
      name: `etcd pod ${name}`,
      command: etcdBinaryPath('etcd', version ? `v${version}` : etcdVersion),
      args,
      logFile: join(this.#workDir, `${name}.log`),
    });
  }
}
