// Starts its own real etcd + kube-apiserver processes to check how they are started and stopped.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CoreV1Api } from '@kubernetes/client-node';
import { startControlPlane } from './control-plane.ts';
import { waitUntil } from './readiness.ts';

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('control plane lifecycle, with real etcd + kube-apiserver processes', () => {
  it('stop() ends every process it started and removes its working directory', async () => {
    const controlPlane = await startControlPlane();
    const pids = controlPlane.processes().map((p) => p.pid);
    expect(pids).toHaveLength(2);
    expect(pids.every(isAlive)).toBe(true);

    await controlPlane.stop();

    expect(pids.filter(isAlive)).toEqual([]);
    expect(existsSync(controlPlane.workDir)).toBe(false);
  });

  it('serves the same kubeconfig again after the API server restarts', async () => {
    const controlPlane = await startControlPlane();
    try {
      const core = controlPlane.kubeConfig.makeApiClient(CoreV1Api);
      await core.createNamespace({ body: { metadata: { name: 'survives-restart' } } });
      const before = controlPlane.processes().find((p) => p.name === 'kube-apiserver')?.pid;

      await controlPlane.restartApiServer(500);

      const after = controlPlane.processes().find((p) => p.name === 'kube-apiserver')?.pid;
      expect(after).toBeDefined();
      expect(after).not.toBe(before);
      expect(isAlive(before ?? -1)).toBe(false);
      // etcd kept the data; the new API server process serves it.
      expect((await core.readNamespace({ name: 'survives-restart' })).metadata?.name).toBe(
        'survives-restart',
      );
    } finally {
      await controlPlane.stop();
    }
  });

  it('leaves no server behind when the process that started it is killed with SIGKILL', async () => {
    const script = fileURLToPath(new URL('./test-support/start-and-hang.ts', import.meta.url));
    const child = spawn(process.execPath, [script], { stdio: ['ignore', 'pipe', 'inherit'] });
    const firstLine = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout }).once('line', resolve);
      child.once('exit', (code) => reject(new Error(`helper exited early (${code})`)));
    });
    const { pids } = JSON.parse(firstLine) as { pids: number[] };
    expect(pids).toHaveLength(2);
    expect(pids.every(isAlive)).toBe(true);

    child.kill('SIGKILL');

    await waitUntil('servers of a killed test run to die', async () => pids.every((pid) => !isAlive(pid)), {
      timeoutMs: 10_000,
      describe: () => `still alive: ${pids.filter(isAlive).join(', ')}`,
    });
  });
});
