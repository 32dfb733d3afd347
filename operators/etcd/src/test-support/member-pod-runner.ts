// A stand-in for the kubelet in the controller tests: the test control plane has no node, so
// nothing would ever run the member pods the operator creates. This runs a real etcd process for
// each of them, from the pod's own command line (so the flags the operator writes are what is
// tested), with a data directory per claim that outlives the pod, as a volume does, and the
// Secrets it mounts written out as files where the flags expect them, after its init containers
// (init-containers.ts), and written again when a Secret changes (as the kubelet refreshes a
// mounted Secret: all its files swapped at once); a run-to-completion backup pod runs its agent once (agent-pods.ts), a restore drill's pod its
// restore, scratch etcd and check (drill-pods.ts). It reports
// readiness from etcd's /readyz into the pod status, restarts a process that exits while its pod
// exists (restartPolicy Always), restarts it on the new binary when the pod's image changes (as
// the kubelet restarts a container whose image was changed: the etcd release the image's tag
// names, built from the Go module proxy), and releases a deleted claim once no pod uses it (what the
// kube-controller-manager's pvc-protection controller does).
import { mkdir, readlink, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import { etcdBinaryPath, etcdVersion, httpGet, startProcess, type ManagedProcess } from '@homeostat/testing';
import { builtin, type KubeClient } from '@homeostat/reconcile';
import { managedSelector } from '../controllers/cluster-names.ts';
import { dataDir, podImage } from '../controllers/desired-member-pod.ts';
import { versionOfImage } from '../controllers/rolling-upgrade.ts';
import { AgentPods, isAgentPod } from './agent-pods.ts';
import { DrillPods, isDrillPod } from './drill-pods.ts';
import { runInitContainers } from './init-containers.ts';

interface Running {
  readonly uid: string;
  readonly pod: string;
  readonly metricsUrl: string;
  /** The pod's flags with its volumes' paths replaced by directories on this machine. */
  readonly args: readonly string[];
  /** The image whose etcd runs now. */
  image: string | undefined;
  process: ManagedProcess;
  ready: boolean | undefined;
  restarts: number;
  /** When the current process started, as a container's state.running.startedAt. */
  startedAt: string;
}

// Faster elections and no fsync: the disk of a test machine is not what these tests are about.
const testFlags = [
  '--unsafe-no-fsync',
  '--heartbeat-interval=100',
  '--election-timeout=1000',
  '--log-level=warn',
];

export class MemberPodRunner {
  readonly #client: KubeClient;
  readonly #namespace: string;
  readonly #workDir: string;
  readonly #running = new Map<string, Running>();
  readonly #agents: AgentPods;
  /** Restore drill pods: init containers, a scratch etcd and its check (drill-pods.ts). */
  readonly drills: DrillPods;
  /** Secret volume directory → the resourceVersion of the Secret written there. */
  readonly #secretVersions = new Map<string, string>();
  #secretWrites = 0;
  #secretsRefreshedAt = 0;
  /** Every member pod this runner started, in order: what each was made with, after it is gone. */
  readonly #started: V1Pod[] = [];
  /** Pods to reboot at the next sync (done there, so it never races a sync in progress). */
  readonly #reboots = new Set<string>();
  /** A rebooted pod's restart count, carried to its new sandbox (the kubelet counts it on). */
  readonly #restartsAfterReboot = new Map<string, number>();
  /** Images whose container exits as soon as it starts, as a broken image's would. */
  readonly #brokenImages = new Set<string>();
  #timer: NodeJS.Timeout | undefined;
  #tick: Promise<void> = Promise.resolve();
  #stopped = false;
  /** When the last sync began and ended, and the error it ended with (a stuck or failing runner shows here). */
  #lastSync: { began?: string; ended?: string; error?: string } = {};

  constructor(client: KubeClient, namespace: string, workDir: string) {
    this.#client = client;
    this.#namespace = namespace;
    this.#workDir = workDir;
    this.#agents = new AgentPods(client, namespace, workDir);
    this.drills = new DrillPods(client, namespace, workDir);
  }

  /** The directory that stands for a claim's volume. */
  volumeDir(claim: string): string {
    return join(this.#workDir, claim);
  }

  /** What the runner holds now, for a failed test's report: each pod's process and what it last reported. */
  describe(): Record<string, unknown> {
    return {
      lastSync: this.#lastSync,
      pendingReboots: [...this.#reboots],
      pods: [...this.#running.values()].map((r) => ({
        pod: r.pod,
        uid: r.uid,
        running: r.process.isRunning(),
        ready: r.ready,
        startedAt: r.startedAt,
        restarts: r.restarts,
        image: r.image,
      })),
    };
  }

  /** Pods whose etcd runs now, by name. */
  runningPods(): string[] {
    return [...this.#running.values()].filter((r) => r.process.isRunning()).map((r) => r.pod);
  }

  /**
   * Makes a pod's sandbox again, as the kubelet does after a node reboot: the same pod object, its
   * init containers run again before etcd (and keep it from starting while one fails).
   */
  reboot(pod: string): void {
    this.#reboots.add(pod);
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
    const running = [...this.#running.values()].find((r) => r.pod === pod);
    await running?.process.stop(0);
  }

  start(intervalMs = 200): void {
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
    await this.drills.stop();
    await Promise.all([...this.#running.values()].map((r) => r.process.stop(2000)));
    this.#running.clear();
  }

  async #sync(): Promise<void> {
    const options = { namespace: this.#namespace, labelSelector: managedSelector };
    const [pods, claims] = await Promise.all([
      this.#client.list(builtin.pods, options),
      this.#client.list(builtin.persistentVolumeClaims, options),
    ]);
    const live = new Map(
      pods.items.filter((p) => !p.metadata?.deletionTimestamp).map((p) => [p.metadata?.uid ?? '', p]),
    );
    for (const [uid, running] of this.#running) {
      if (!this.#reboots.delete(running.pod)) continue;
      this.#restartsAfterReboot.set(running.pod, running.restarts + 1);
      await running.process.stop(2000);
      await this.#setReady(running, false);
      this.#running.delete(uid);
    }
    for (const [uid, running] of this.#running) {
      if (!live.has(uid)) {
        await running.process.stop(2000);
        this.#running.delete(uid);
      }
    }
    await this.drills.reap(new Set(live.keys()));
    for (const [uid, pod] of live) {
      // One pod that cannot run (an agent whose Secret is gone) waits for the next sync without
      // holding the others back, as the kubelet works on each pod apart.
      await this.#syncPod(uid, pod).catch(() => undefined);
    }
    await this.#refreshSecretVolumes(live);
    await Promise.all([...this.#running.values()].map((r) => this.#reportReadiness(r)));
    await this.#releaseClaims(claims.items, [...live.values()]);
  }

  async #syncPod(uid: string, pod: V1Pod): Promise<void> {
    if (isDrillPod(pod)) {
      this.drills.start(uid, pod, (claim) => this.volumeDir(claim));
      return;
    }
    if (isAgentPod(pod)) {
      // A finished agent's Secrets are not read again (they may be gone by now).
      if (!this.#agents.ran(uid)) await this.#agents.run(uid, pod, await this.#agentMounts(uid, pod));
      return;
    }
    const running = this.#running.get(uid);
    if (!running) await this.#startPod(uid, pod);
    else if (podImage(pod) !== running.image) {
      await running.process.stop(2000);
      // The kubelet reports a restarting container not Ready until its probe passes again.
      await this.#setReady(running, false);
      running.image = podImage(pod);
      running.restarts++;
      running.ready = undefined;
      running.process = this.#spawn(running.pod, running.args, running.image);
      running.startedAt = new Date().toISOString();
    } else if (!running.process.isRunning()) {
      running.restarts++;
      running.ready = undefined;
      running.process = this.#spawn(running.pod, running.args, running.image);
      running.startedAt = new Date().toISOString();
    }
  }

  /** Mount path → directory of an agent pod's claim and Secrets. */
  async #agentMounts(uid: string, pod: V1Pod): Promise<Map<string, string>> {
    const mounts = await this.#secretVolumes(uid, pod);
    const claimVolume = pod.spec?.volumes?.find((v) => v.persistentVolumeClaim);
    const mount = pod.spec?.containers[0]?.volumeMounts?.find((m) => m.name === claimVolume?.name);
    if (mount) mounts.set(mount.mountPath, this.volumeDir(this.#claimOf(pod)));
    return mounts;
  }

  #claimOf(pod: V1Pod): string {
    return pod.spec?.volumes?.find((v) => v.persistentVolumeClaim)?.persistentVolumeClaim?.claimName ?? '';
  }

  /**
   * Writes the pod's Secret volumes out as files (again only where the Secret changed since);
   * returns mount path → local directory. A Secret that cannot be read keeps its files, as the
   * kubelet keeps a mounted Secret that was deleted, except on the pod's first start.
   */
  async #secretVolumes(uid: string, pod: V1Pod, starting = true): Promise<Map<string, string>> {
    const mounts = new Map<string, string>();
    for (const volume of pod.spec?.volumes ?? []) {
      const secretName = volume.secret?.secretName;
      const mount = pod.spec?.containers[0]?.volumeMounts?.find((m) => m.name === volume.name);
      if (!secretName || !mount) continue;
      const dir = join(this.#workDir, `${pod.metadata?.name ?? ''}-${uid.slice(0, 8)}`, volume.name);
      mounts.set(mount.mountPath, dir);
      const secret = starting
        ? await this.#client.get(builtin.secrets, secretName, this.#namespace)
        : await this.#client.find(builtin.secrets, secretName, this.#namespace).catch(() => undefined);
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

  /** Every second, the Secret volumes of running member pods as their Secrets are now. */
  async #refreshSecretVolumes(live: ReadonlyMap<string, V1Pod>): Promise<void> {
    if (Date.now() - this.#secretsRefreshedAt < 1000) return;
    this.#secretsRefreshedAt = Date.now();
    for (const [uid, pod] of live) {
      if (this.#running.has(uid)) await this.#secretVolumes(uid, pod, false);
    }
  }

  #args(pod: V1Pod, secretDirs: ReadonlyMap<string, string>): string[] {
    const volume = join(this.volumeDir(this.#claimOf(pod)), 'data');
    const local = (arg: string) => {
      if (arg === `--data-dir=${dataDir}`) return `--data-dir=${volume}`;
      let result = arg;
      for (const [mountPath, dir] of secretDirs) result = result.replace(`=${mountPath}/`, `=${dir}/`);
      return result;
    };
    return [...(pod.spec?.containers[0]?.args ?? []).map(local), ...testFlags];
  }

  #spawn(name: string, args: readonly string[], image: string | undefined): ManagedProcess {
    if (image !== undefined && this.#brokenImages.has(image)) {
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

  async #startPod(uid: string, pod: V1Pod): Promise<void> {
    if (!this.#started.some((p) => p.metadata?.uid === uid)) this.#started.push(pod);
    await mkdir(this.volumeDir(this.#claimOf(pod)), { recursive: true, mode: 0o700 });
    // A failed init container leaves the pod unstarted: the next sync runs them again.
    await runInitContainers(pod, this.volumeDir(this.#claimOf(pod)), this.#client, this.#namespace, (claim) =>
      this.volumeDir(claim),
    );
    const args = this.#args(pod, await this.#secretVolumes(uid, pod));
    const metricsFlag = args.find((a) => a.startsWith('--listen-metrics-urls='));
    const name = pod.metadata?.name ?? '';
    this.#running.set(uid, {
      uid,
      pod: name,
      metricsUrl: metricsFlag?.slice('--listen-metrics-urls='.length) ?? '',
      args,
      image: podImage(pod),
      process: this.#spawn(name, args, podImage(pod)),
      ready: undefined,
      restarts: this.#restartsAfterReboot.get(name) ?? 0,
      startedAt: new Date().toISOString(),
    });
    this.#restartsAfterReboot.delete(name);
  }

  async #reportReadiness(running: Running): Promise<void> {
    let ready = false;
    if (running.process.isRunning()) {
      try {
        ready = (await httpGet(`${running.metricsUrl}/readyz`)).status === 200;
      } catch {
        ready = false;
      }
    }
    if (ready === running.ready) return;
    await this.#setReady(running, ready);
  }

  async #setReady(running: Running, ready: boolean): Promise<void> {
    await this.#client.patchStatus(builtin.pods, running.pod, this.#namespace, {
      phase: 'Running',
      conditions: [
        { type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: new Date().toISOString() },
      ],
      // As the kubelet reports it: the image the container runs now, and whether it is ready.
      containerStatuses: [
        {
          name: 'etcd',
          image: running.image ?? '',
          imageID: '',
          ready,
          restartCount: running.restarts,
          state: { running: { startedAt: running.startedAt } },
        },
      ],
    });
    running.ready = ready;
  }

  async #releaseClaims(claims: V1PersistentVolumeClaim[], pods: V1Pod[]): Promise<void> {
    const inUse = new Set(pods.map((p) => this.#claimOf(p)));
    for (const claim of claims) {
      const name = claim.metadata?.name ?? '';
      if (!claim.metadata?.deletionTimestamp || inUse.has(name)) continue;
      await rm(this.volumeDir(name), { recursive: true, force: true });
      await this.#client.patch(
        builtin.persistentVolumeClaims,
        name,
        this.#namespace,
        [{ op: 'remove', path: '/metadata/finalizers' }],
        { patchType: 'json' },
      );
    }
  }
}
