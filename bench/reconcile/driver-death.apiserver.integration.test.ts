// Starts bench:reconcile's driver, which starts a real etcd + kube-apiserver and the TypeScript
// operator process, then ends the driver the hard ways and checks that nothing it started outlives
// it (issue 15: a dead driver's operator kept retrying against a gone control plane for 30 min).
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { waitUntil } from '@homeostat/testing';

const driver = fileURLToPath(new URL('./reconcile.bench.ts', import.meta.url));

/** Running, or at least not yet a zombie waiting to be reaped. */
function isAlive(pid: number): boolean {
  try {
    const state = /\) (\S)/.exec(readFileSync(`/proc/${pid}/stat`, 'utf8'))?.[1];
    return state !== 'Z';
  } catch {
    return false;
  }
}

/** Starts the driver; resolves with the pids and directories it made, once its operator is ready. */
async function startDriver() {
  const child = spawn(
    process.execPath,
    [driver, '--objects=3', '--implementations=typescript', '--idle-seconds=600'],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const exited = new Promise<number | string>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')),
  );
  const log: string[] = [];
  const dirs: string[] = [];
  const pids = await new Promise<number[]>((resolve, reject) => {
    const found: number[] = [];
    createInterface({ input: child.stderr }).on('line', (line) => {
      log.push(line);
      const controlPlane = /control plane .* \(pids ([\d, ]+), in (\S+)\)/.exec(line);
      if (controlPlane?.[1] && controlPlane[2]) {
        found.push(...controlPlane[1].split(', ').map(Number));
        dirs.push(controlPlane[2]);
      }
      const logs = /operator logs in (\S+)/.exec(line);
      if (logs?.[1]) dirs.push(logs[1]);
      const operator = /operator pid (\d+) ready/.exec(line);
      if (operator?.[1]) resolve([...found, Number(operator[1])]);
    });
    void exited.then((code) => reject(new Error(`the driver exited early (${code}):\n${log.join('\n')}`)));
  });
  return { child, exited, pids, dirs };
}

describe('bench:reconcile ends what it started, however it ends', () => {
  it('SIGKILL of the driver: the kernel kills the operator and the control plane with it', async () => {
    const { child, exited, pids, dirs } = await startDriver();
    try {
      expect(pids).toHaveLength(3); // etcd, kube-apiserver, the operator
      expect(pids.filter(isAlive)).toEqual(pids);

      child.kill('SIGKILL');
      expect(await exited).toBe('SIGKILL');

      await waitUntil('every process of the killed driver to die', async () => !pids.some(isAlive), {
        timeoutMs: 10_000,
        describe: () => `still alive: ${pids.filter(isAlive).join(', ')}`,
      });
    } finally {
      // Nothing runs in a SIGKILLed process: its files are left for whoever killed it.
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    }
  });

  it('SIGTERM of the driver: it stops what it started, removes its files, then exits 143', async () => {
    const { child, exited, pids, dirs } = await startDriver();
    expect(pids.filter(isAlive)).toEqual(pids);
    expect(dirs).toHaveLength(2); // the driver's and the control plane's

    child.kill('SIGTERM');
    expect(await exited).toBe(143);

    expect(pids.filter(isAlive)).toEqual([]);
    expect(dirs.filter((dir) => existsSync(dir))).toEqual([]);
  });
});
