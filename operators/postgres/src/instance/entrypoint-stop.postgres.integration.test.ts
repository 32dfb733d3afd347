// The instance entrypoint stopped by the kubelet: it sends the image's STOPSIGNAL (SIGINT) to the
// container's main process only. A bash loop with no trap ignores a SIGINT that arrives while its
// foreground `sleep` runs on, so the container lived out the pod's grace period (30 s) and every
// switchover and rolling restart waited for it. Both loops of the script, run as real processes
// here, must end on the signal instead: the self-fence watcher, and a replica waiting for its
// primary (which, left alone, waits far longer than this test does).
import { afterAll, describe, expect, it } from 'vitest';
import { freeLoopbackPort, waitUntil } from '@homeostat/testing';
import type { ManagedProcess } from '@homeostat/testing';
import { PostgresTestBed } from '../test-support/postgres-processes.ts';

describe('the instance entrypoint ends on the signal a pod deletion sends', () => {
  const bed = new PostgresTestBed('stop');
  afterAll(() => bed.cleanup());

  /** Sends SIGINT once the script has logged `ready`, and waits for it to exit. */
  async function interruptOnce(proc: ManagedProcess, name: string, ready: RegExp) {
    await waitUntil(
      `${name} logs ${String(ready)}`,
      async () => bed.entrypointLog(name).some((l) => ready.test(l)),
      {
        timeoutMs: 30_000,
        intervalMs: 100,
        abort: proc.exited.then((code) => `the entrypoint exited early (${code})`),
      },
    );
    process.kill(proc.pid, 'SIGINT');
    await waitUntil(`${name} exits on SIGINT`, async () => !proc.isRunning(), {
      timeoutMs: 10_000,
      intervalMs: 50,
    });
    return proc.exited;
  }

  it('the self-fence watcher exits on SIGINT', { timeout: 60_000 }, async () => {
    const proc = await bed.runEntrypoint(
      'watcher',
      { role: 'replica', env: { PG_PEERS_HOST: 'localhost' } },
      ['self-fence'],
    );
    expect(await interruptOnce(proc, 'watcher', /self-fence: watching/)).toBe(0);
    expect(bed.entrypointLog('watcher').some((l) => /stopping on a signal \(self-fence\)/.test(l))).toBe(
      true,
    );
  });

  it(
    'a replica waiting for its absent primary exits on SIGINT, long before its wait runs out',
    { timeout: 60_000 },
    async () => {
      const absent = { name: 'absent', host: '127.0.0.1', port: await freeLoopbackPort() };
      const proc = await bed.runEntrypoint('waiting', {
        role: 'replica',
        primary: absent,
        env: { PG_PRIMARY_WAIT_SECONDS: '600' },
      });
      expect(await interruptOnce(proc, 'waiting', /waiting for the primary/)).toBe(0);
      expect(bed.entrypointLog('waiting').some((l) => /stopping on a signal \(entrypoint\)/.test(l))).toBe(
        true,
      );
    },
  );
});
