// The stand-in kubelet's restore drill pods (see member-pod-runner.ts): the pod's init containers
// run as the real programs (init-containers.ts: the agent from this workspace's main.ts, etcdutl
// from the pinned build) into the directory that stands for the drill's claim, then its etcd
// container runs as a real etcd process on that directory and its check container as the real
// agent beside it, the status the run ends with handed to the kubelet to write (a failed init
// container fails the pod with its message; the check's termination message; etcd left running
// until the pod is deleted, as a kubelet would leave it). The pod's loopback URLs are moved to free ports:
// every pod here shares this machine's network, where a pod has its own.
import { join } from 'node:path';
import type { V1Pod, V1PodStatus } from '@kubernetes/client-node';
import {
  etcdBinaryPath,
  etcdVersion,
  freeLoopbackPort,
  startProcess,
  type Completion,
  type ManagedProcess,
  type Run,
} from '@homeostat/testing';
import type { KubeClient } from '@homeostat/reconcile';
import { terminationLog } from '../backup/claim-backup-agent.ts';
import { drillClientUrl, drillLabel, drillPeerUrl } from '../controllers/backup/drill-pod.ts';
import { dataDir } from '../controllers/desired-member-pod.ts';
import { versionOfImage } from '../controllers/rolling-upgrade.ts';
import { runAgentProgram, terminatedStatus, terminationMessage } from './agent-pods.ts';
import { runInitContainers } from './init-containers.ts';

export const isDrillPod = (pod: V1Pod): boolean => pod.metadata?.labels?.[drillLabel] !== undefined;

/** What a drill run measured from outside, for a test to print. */
export interface DrillRun {
  readonly pod: string;
  readonly uid: string;
  /** Seconds from the start of the init containers to the check's end. */
  readonly seconds: number;
  readonly outcome: 'succeeded' | 'init-failed' | 'check-failed';
}

export class DrillPods {
  readonly #client: KubeClient;
  readonly #namespace: string;
  readonly #workDir: string;
  readonly runs: DrillRun[] = [];

  constructor(client: KubeClient, namespace: string, workDir: string) {
    this.#client = client;
    this.#namespace = namespace;
    this.#workDir = workDir;
  }

  /**
   * While true, drill pods are left unstarted, as a kubelet leaves a pod it cannot run (no node
   * fits, an image that cannot be pulled): the operator must end the drill by its timeout.
   */
  held = false;

  /**
   * Starts the pod's drill (the kubelet runs it once, in the background, and writes the status it
   * ends with); its etcd is left running until the pod is deleted, as a kubelet would leave it.
   */
  run(uid: string, pod: V1Pod, volumeDir: (claim: string) => string): Run | undefined {
    if (this.held) return undefined;
    let etcd: ManagedProcess | undefined;
    let stopped = false;
    const completion = this.#run(uid, pod, volumeDir, (started) => {
      etcd = started;
      if (stopped) void started.stop(2000);
    });
    return {
      completion,
      stop: async () => {
        stopped = true;
        await etcd?.stop(2000);
      },
    };
  }

  async #run(
    uid: string,
    pod: V1Pod,
    volumeDir: (claim: string) => string,
    etcdStarted: (etcd: ManagedProcess) => void,
  ): Promise<Completion> {
    const name = pod.metadata?.name ?? '';
    const began = Date.now();
    const claim = pod.spec?.volumes?.find((v) => v.name === 'data')?.persistentVolumeClaim?.claimName ?? '';
    const volume = volumeDir(claim);
    try {
      await runInitContainers(pod, volume, this.#client, this.#namespace, volumeDir);
    } catch (error) {
      const message = String(error instanceof Error ? error.message : error).slice(-2000);
      // The init container that failed: runInitContainers names the command; the first whose
      // name appears is reported, as the kubelet reports the one that exited.
      // A word of the message, at any whitespace: stderr may begin with a line of Node's own (a
      // warning) before the program's, as it did under CI, so "fetch-backup failed" can start a line.
      const named = (word: string) =>
        new RegExp(`(^|\\s)${word.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(\\s|$)`).test(message);
      const failed =
        pod.spec?.initContainers?.find((c) => named(c.args?.[0] ?? c.name)) ?? pod.spec?.initContainers?.[0];
      this.runs.push({ pod: name, uid, seconds: (Date.now() - began) / 1000, outcome: 'init-failed' });
      return {
        exitCode: 1,
        message,
        status: { phase: 'Failed', initContainerStatuses: [terminatedStatus(failed, 1, message)] },
      };
    }
    const [client, peer] = [await freeLoopbackPort(), await freeLoopbackPort()];
    const local = (arg: string) =>
      arg
        .replaceAll(drillClientUrl, `http://127.0.0.1:${client}`)
        .replaceAll(drillPeerUrl, `http://127.0.0.1:${peer}`)
        .replace(`=${dataDir}`, `=${join(volume, 'data')}`);
    const [etcd, check] = pod.spec?.containers ?? [];
    const version = versionOfImage(etcd?.image);
    etcdStarted(
      startProcess({
        name: `etcd drill pod ${name}`,
        command: etcdBinaryPath('etcd', version ? `v${version}` : etcdVersion),
        args: [...(etcd?.args ?? []).map(local), '--unsafe-no-fsync', '--log-level=warn'],
        logFile: join(this.#workDir, `${name}.log`),
      }),
    );
    const resultFile = join(this.#workDir, `${name}-${uid.slice(0, 8)}.termination-log`);
    const args = (check?.args ?? []).map((a) => local(a).replace(`=${terminationLog}`, `=${resultFile}`));
    const { code, stderr } = await runAgentProgram(args);
    const message = await terminationMessage(resultFile, code, stderr);
    const status: V1PodStatus = {
      phase: 'Running',
      containerStatuses: [
        {
          name: 'etcd',
          image: etcd?.image ?? '',
          imageID: '',
          ready: true,
          restartCount: 0,
          state: { running: { startedAt: new Date(began) } },
        },
        terminatedStatus(check, code, message),
      ],
    };
    this.runs.push({
      pod: name,
      uid,
      seconds: (Date.now() - began) / 1000,
      outcome: code === 0 ? 'succeeded' : 'check-failed',
    });
    return { exitCode: code, message, status };
  }
}
