// The stand-in kubelet's run-to-completion pods (see member-pod-runner.ts): a backup into a claim
// runs the operator image's agent once. Here it runs as the real program (this workspace's
// main.ts, what the image's bundle is built from) with the pod's volumes mapped to directories
// (the claim's, the Secrets written out as files), and its termination message (the file the
// kubelet reads, /dev/termination-log) reported in the pod's status, as a kubelet does.
import { execFile } from 'node:child_process';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { V1Container, V1ContainerStatus, V1Pod } from '@kubernetes/client-node';
import { repoRoot } from '@homeostat/testing';
import { builtin, type KubeClient } from '@homeostat/reconcile';
import { terminationLog } from '../backup/claim-backup-agent.ts';
import { backupPodLabel } from '../controllers/backup/claim-backup-pod.ts';

export const isAgentPod = (pod: V1Pod): boolean => pod.metadata?.labels?.[backupPodLabel] !== undefined;

/** Runs the operator image's agent (this workspace's main.ts) once, to its end. */
export function runAgentProgram(args: readonly string[]): Promise<{ code: number; stderr: string }> {
  const main = join(repoRoot, 'operators', 'etcd', 'src', 'main.ts');
  return new Promise((resolve) => {
    execFile(process.execPath, [main, ...args], { timeout: 120_000 }, (error, _stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stderr });
    });
  });
}

/**
 * What the kubelet reports as a finished container's message: its termination-log file, or with
 * FallbackToLogsOnError the log's tail when a failed container left the file empty.
 */
export async function terminationMessage(resultFile: string, code: number, stderr: string): Promise<string> {
  const written = await readFile(resultFile, 'utf8').catch(() => '');
  return written || (code === 0 ? '' : stderr.slice(-2000));
}

/** A container's status once it ended with `exitCode`, as the kubelet reports it. */
export function terminatedStatus(
  container: V1Container | undefined,
  exitCode: number,
  message: string,
): V1ContainerStatus {
  return {
    name: container?.name ?? '',
    image: container?.image ?? '',
    imageID: '',
    ready: false,
    restartCount: 0,
    state: { terminated: { exitCode, reason: exitCode === 0 ? 'Completed' : 'Error', message } },
  };
}

export class AgentPods {
  readonly #client: KubeClient;
  readonly #namespace: string;
  readonly #workDir: string;
  readonly #done = new Set<string>();

  constructor(client: KubeClient, namespace: string, workDir: string) {
    this.#client = client;
    this.#namespace = namespace;
    this.#workDir = workDir;
  }

  /** Runs the pod's container once to its end and reports it; `mounts` maps mount paths to directories. */
  /** Whether the agent of pod `uid` has run (an agent pod runs once, to completion). */
  ran(uid: string): boolean {
    return this.#done.has(uid);
  }

  async run(uid: string, pod: V1Pod, mounts: ReadonlyMap<string, string>): Promise<void> {
    if (this.#done.has(uid)) return;
    this.#done.add(uid);
    const name = pod.metadata?.name ?? '';
    const container = pod.spec?.containers[0];
    for (const dir of mounts.values()) await mkdir(dir, { recursive: true });
    const resultFile = join(this.#workDir, `${name}-${uid.slice(0, 8)}.termination-log`);
    const args = (container?.args ?? []).map((arg) => {
      let local = arg.replace(`=${terminationLog}`, `=${resultFile}`);
      for (const [mountPath, dir] of mounts) local = local.replace(`=${mountPath}`, `=${dir}`);
      return local;
    });
    const { code, stderr } = await runAgentProgram(args);
    await this.#client.patchStatus(builtin.pods, name, this.#namespace, {
      phase: code === 0 ? 'Succeeded' : 'Failed',
      containerStatuses: [
        terminatedStatus(container, code, await terminationMessage(resultFile, code, stderr)),
      ],
    });
  }
}
