// Fencing on request inside the instance pod (ADR 0223), with the production entrypoint and its
// self-fence watcher run as real processes on a real primary. The pod's fence annotation reaches
// them as a file (the downward API volume, PG_FENCE_FILE): set, the watcher stops PostgreSQL and a
// restarted container waits without touching the data; cleared, that same container starts the
// instance again, with every row it had.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { waitUntil } from '@homeostat/testing';
import { defaultConnectOptions, withConnection } from './instance.ts';
import { PostgresTestBed } from '../test-support/postgres-processes.ts';

/** Every file under `dir` with its content, hashed: what "the data is left as it is" compares. */
function treeHash(dir: string): string {
  const hash = createHash('sha256');
  const walk = (path: string) => {
    for (const entry of readdirSync(path).sort()) {
      const full = join(path, entry);
      if (statSync(full).isDirectory()) walk(full);
      else hash.update(`${full}\n`).update(readFileSync(full));
    }
  };
  walk(dir);
  return hash.digest('hex');
}

describe('an instance fenced on request: the real entrypoint and self-fence watcher on a real primary', () => {
  const bed = new PostgresTestBed('fence');
  afterAll(() => bed.cleanup());

  it('stops PostgreSQL, keeps it stopped with the data untouched, and starts it again once unfenced', async () => {
    const fenceFile = join(bed.root, 'fenced');
    writeFileSync(fenceFile, '', { mode: 0o644 });
    const env = { PG_FENCE_FILE: fenceFile };
    const quick = { timeoutMs: 30_000, intervalMs: 100 };
    const sql = async (text: string) =>
      withConnection(
        bed.instances.get('held') ?? { name: 'held', host: '127.0.0.1', port: 1 },
        bed.superuser,
        defaultConnectOptions,
        (c) => c.query(text),
      );

    const primary = await bed.start('held', { role: 'primary', env });
    await sql('CREATE TABLE kept (id int); INSERT INTO kept SELECT generate_series(1, 1000)');
    const watcher = await bed.runEntrypoint(
      'held',
      { role: 'primary', env: { ...env, PG_PEERS_HOST: 'localhost' } },
      ['self-fence'],
    );
    try {
      await waitUntil(
        'the watcher runs',
        async () => bed.entrypointLog('held').some((l) => l.includes('self-fence: watching')),
        quick,
      );
      expect(primary.isRunning()).toBe(true);

      writeFileSync(fenceFile, 'true');
      await waitUntil('the fenced primary stops', async () => !primary.isRunning(), quick);
      // A fast shutdown, not a crash: the server exits 0, as a container ends cleanly.
      expect(await primary.process.exited).toBe(0);
      const { dataDir } = bed.instanceDirs('held');
      const atFence = treeHash(dataDir);

      // The kubelet starts the container again: the entrypoint waits and starts nothing.
      const waiting = await bed.runEntrypoint('held', { role: 'primary', env });
      await waitUntil(
        'the restarted container says it is fenced',
        async () =>
          bed.entrypointLog('held').some((l) => l.includes('fenced on request: PostgreSQL is not started')),
        { ...quick, abort: waiting.exited.then((code) => `the entrypoint exited (${code})`) },
      );
      await sleep(3000);
      expect(waiting.isRunning()).toBe(true);
      expect(treeHash(dataDir)).toBe(atFence);
      await expect(sql('SELECT 1')).rejects.toThrow();

      // Unfenced: the same container goes on and starts the instance.
      writeFileSync(fenceFile, '');
      await waitUntil(
        'the unfenced instance answers SQL again',
        async () => {
          const answered = await withConnection(
            { name: 'held', host: '127.0.0.1', port: primary.port },
            bed.superuser,
            defaultConnectOptions,
            (c) => c.query<{ n: number }>('SELECT count(*)::int AS n FROM kept'),
          ).catch(() => undefined);
          return answered?.rows[0]?.n === 1000;
        },
        { ...quick, abort: waiting.exited.then((code) => `the entrypoint exited (${code})`) },
      );
      expect(waiting.isRunning()).toBe(true);
      process.kill(waiting.pid, 'SIGINT');
      expect(await waiting.exited).toBe(0);
      expect(watcher.isRunning()).toBe(true);
    } finally {
      process.kill(watcher.pid, 'SIGINT');
      await watcher.exited;
    }
  }, 120_000);
});
