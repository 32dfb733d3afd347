// The test bed gives the `postgres` user what it needs outside the checkout, which that user may
// not be able to enter (a clone under root's mode-700 home), and says so when it cannot.
import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, isAbsolute } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { waitUntil } from '@homeostat/testing';
import {
  detachedSegments,
  orphanedDynamicSharedMemory,
  postgresTestUid,
  releaseSharedMemory,
  sharedMemoryHeldBy,
  unmappedDynamicSharedMemory,
} from './orphaned-shared-memory.ts';
import { entrypointSource, PostgresTestBed, type TestInstance } from './postgres-processes.ts';

const checkout = fileURLToPath(new URL('../../../../', import.meta.url));
const isRoot = process.getuid?.() === 0;

const beds: PostgresTestBed[] = [];
afterEach(async () => {
  for (const bed of beds.splice(0)) await bed.cleanup();
});

function isInside(path: string, dir: string): boolean {
  const rel = relative(dir, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/** The postmaster's pid and its System V segment, from postmaster.pid (lines 1 and 7). */
function postmasterOf(instance: TestInstance): { pid: number; segment: number } {
  const lines = readFileSync(join(instance.dataDir, 'postmaster.pid'), 'utf8').split('\n');
  return { pid: Number(lines[0]), segment: Number(lines[6]?.trim().split(/\s+/)[1]) };
}

function segmentExists(shmid: number): boolean {
  return readFileSync('/proc/sysvipc/shm', 'utf8')
    .split('\n')
    .slice(1)
    .some((row) => Number(row.trim().split(/\s+/)[1]) === shmid);
}

describe('PostgresTestBed', () => {
  it('runs a copy of the entrypoint kept outside the checkout', () => {
    const bed = new PostgresTestBed('entrypoint-copy');
    beds.push(bed);
    expect(isInside(entrypointSource, checkout)).toBe(true);
    expect(isInside(bed.entrypoint, checkout), `${bed.entrypoint} is inside ${checkout}`).toBe(false);
    expect(isInside(bed.entrypoint, bed.root)).toBe(true);
    expect(readFileSync(bed.entrypoint, 'utf8')).toBe(readFileSync(entrypointSource, 'utf8'));
  });

  it.runIf(isRoot)('lets the postgres user run that copy and enter each instance directory', () => {
    const bed = new PostgresTestBed('entrypoint-reach');
    beds.push(bed);
    const asPostgres = (...command: string[]) =>
      execFileSync('setpriv', ['--reuid=postgres', '--regid=postgres', '--init-groups', '--', ...command]);
    expect(() => asPostgres('test', '-x', bed.entrypoint)).not.toThrow();
    expect(() => asPostgres('test', '-r', join(bed.root, 'secrets', 'superuser', 'password'))).not.toThrow();
  });

  it.runIf(isRoot)('refuses, naming the path, a temporary directory the postgres user cannot reach', () => {
    const closed = mkdtempSync(join(tmpdir(), 'homeostat-closed-')); // mode 700, owned by root
    const previous = process.env.TMPDIR;
    process.env.TMPDIR = closed;
    try {
      expect(() => new PostgresTestBed('unreachable')).toThrow(`the postgres user cannot run ${closed}/`);
    } finally {
      if (previous === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = previous;
      rmSync(closed, { recursive: true, force: true });
    }
  });

  // A container's IPC namespace goes with it; a process here leaves its shared memory behind, and
  // 4096 leaked segments (kernel.shmmni) once made every initdb on the machine fail.
  it('leaves none of the shared memory of an instance it kills behind: real PostgreSQL', async () => {
    const bed = new PostgresTestBed('shared-memory');
    beds.push(bed);
    const instance = await bed.start('shm-0', { role: 'primary' });
    const postmaster = postmasterOf(instance);
    const held = sharedMemoryHeldBy([postmaster.pid]);
    expect(held.segments).toEqual([postmaster.segment]);
    expect(held.files.length).toBeGreaterThan(0);

    await instance.kill9();

    expect(segmentExists(postmaster.segment), `segment ${postmaster.segment}`).toBe(false);
    expect(held.files.filter((path) => existsSync(path))).toEqual([]);
  });

  it('finds what a killed PostgreSQL left and releases it: real PostgreSQL, SIGKILL from outside', async () => {
    const bed = new PostgresTestBed('orphaned-memory');
    beds.push(bed);
    const instance = await bed.start('orphan-0', { role: 'primary' });
    const postmaster = postmasterOf(instance);
    const held = sharedMemoryHeldBy([postmaster.pid]);
    const uid = postgresTestUid();
    expect(detachedSegments(uid, 0)).not.toContain(postmaster.segment);

    process.kill(postmaster.pid, 'SIGKILL'); // its children leave once their postmaster is gone
    await instance.process.exited;

    await waitUntil(
      'every process of the killed instance detached',
      () => Promise.resolve(detachedSegments(uid, 0).includes(postmaster.segment)),
      { timeoutMs: 10_000 },
    );
    expect(unmappedDynamicSharedMemory(uid, 0)).toEqual(expect.arrayContaining(held.files));
    expect(await releaseSharedMemory(held)).toEqual({ segments: 1, files: held.files.length });
    expect(segmentExists(postmaster.segment)).toBe(false);
  });

  it('keeps a /dev/shm file nobody maps while a PostgreSQL of the test user runs: real PostgreSQL', async () => {
    // A running postmaster pins segments no process maps for a while; a sweep that took unmapped
    // files for orphans deleted one under a CI run beside it ("could not open shared memory
    // segment" on every new connection). Here a file stands for such a segment.
    const bed = new PostgresTestBed('pinned-memory');
    beds.push(bed);
    await bed.start('pinned-0', { role: 'primary' });
    const uid = postgresTestUid();
    const pinned = `/dev/shm/PostgreSQL.${process.pid}${Date.now() % 100_000}`;
    writeFileSync(pinned, Buffer.alloc(4096), { mode: 0o600 });
    try {
      chownSync(pinned, uid, -1);
      expect(unmappedDynamicSharedMemory(uid, 0)).toContain(pinned);
      expect(orphanedDynamicSharedMemory(uid, 0)).not.toContain(pinned);
    } finally {
      rmSync(pinned, { force: true });
    }
  });
});
