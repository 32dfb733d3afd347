// The stand-in kubelet's run-to-completion pods (see member-pod-runner.ts): a backup into a claim
// runs the operator image's agent once. Here it runs as the real program (this workspace's
// main.ts, what the image's bundle is built from) with the pod's volumes mapped to directories
// (the claim's, the Secrets written out as files), and its termination message is the file the
// kubelet reads, /dev/termination-log.
import { execFile } from 'node:child_process';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { V1Container, V1ContainerStatus, V1Pod } from '@kubernetes/client-node';
import { repoRoot, type Completion } from '@homeostat/testing';
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

/**
 * Runs an agent pod's container once, to its end; `mounts` maps mount paths to directories. The
 * kubelet (member-pod-runner.ts) reports the end.
 */
export async function runAgentPod(
  uid: string,
  pod: V1Pod,
  mounts: ReadonlyMap<string, string>,
  workDir: string,
): Promise<Completion> {
  const name = pod.metadata?.name ?? '';
  const container = pod.spec?.containers[0];
  for (const dir of mounts.values()) await mkdir(dir, { recursive: true });
  const resultFile = join(workDir, `${name}-${uid.slice(0, 8)}.termination-log`);
  const args = (container?.args ?? []).map((arg) => {
    let local = arg.replace(`=${terminationLog}`, `=${resultFile}`);
    for (const [mountPath, dir] of mounts) local = local.replace(`=${mountPath}`, `=${dir}`);
    return local;
  });
  const { code, stderr } = await runAgentProgram(args);
  return { exitCode: code, message: await terminationMessage(resultFile, code, stderr) };
}
