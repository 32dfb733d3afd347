// The stand-in kubelet's init containers (see member-pod-runner.ts): a restored member's pod runs
// the operator image's restore agent and the etcd image's etcdutl before etcd. Here each runs as
// the real program on this machine: the agent from this workspace's main.ts (what the image's
// bundle is built from), etcdutl from the pinned build, with the pod's volume paths mapped to the
// claim's directory and its Secret environment variables read from the API server.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { binaryPath, repoRoot } from '@homeostat/testing';
import { builtin, type KubeClient } from '@homeostat/reconcile';
import { etcdutlBinary } from '../controllers/backup/restore-pod.ts';
import { dataMountPath } from '../controllers/desired-member-pod.ts';

async function environment(
  container: V1Container,
  client: KubeClient,
  namespace: string,
): Promise<Record<string, string>> {
  const env: Record<string, string> = {};
  for (const variable of container.env ?? []) {
    const ref = variable.valueFrom?.secretKeyRef;
    if (!ref) {
      if (variable.value !== undefined) env[variable.name] = variable.value;
      continue;
    }
    const secret = await client.find(builtin.secrets, ref.name ?? '', namespace);
    const value = secret?.data?.[ref.key];
    if (value !== undefined) env[variable.name] = Buffer.from(value, 'base64').toString('utf8');
    else if (!ref.optional)
      throw new Error(`${container.name}: Secret ${ref.name ?? ''} has no key ${ref.key}`);
  }
  return env;
}

function run(command: string, args: readonly string[], env: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      command,
      [...args],
      { env: { ...process.env, ...env }, timeout: 120_000 },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`${command} ${args.join(' ')}: ${stderr.trim() || error.message}`));
        else resolve(stdout);
      },
    );
  });
}

/** Runs the pod's init containers in order, as the kubelet would; rejects at the first that fails. */
export async function runInitContainers(
  pod: V1Pod,
  volumeDir: string,
  client: KubeClient,
  namespace: string,
  /** The directory of any other claim the pod mounts (a backup restored from a claim). */
  claimDir: (claim: string) => string = () => volumeDir,
): Promise<void> {
  const claims = new Map(
    (pod.spec?.volumes ?? []).flatMap((v) =>
      v.persistentVolumeClaim ? [[v.name, v.persistentVolumeClaim.claimName] as const] : [],
    ),
  );
  for (const container of pod.spec?.initContainers ?? []) {
    // Other claims first: their mount paths may begin with the data volume's.
    const mounts = (container.volumeMounts ?? []).filter(
      (m) => m.mountPath !== dataMountPath && claims.has(m.name),
    );
    const args = (container.args ?? []).map((arg) => {
      let local = arg;
      for (const m of mounts) local = local.replaceAll(m.mountPath, claimDir(claims.get(m.name) ?? ''));
      return local.replaceAll(dataMountPath, volumeDir);
    });
    const env = await environment(container, client, namespace);
    if (container.command?.[0] === etcdutlBinary) {
      await run(binaryPath('etcdutl'), args, env);
    } else {
      // The operator image: its entrypoint is node running the bundle of main.ts.
      await run(process.execPath, [join(repoRoot, 'operators', 'etcd', 'src', 'main.ts'), ...args], env);
    }
  }
}
