// The test bed gives the `postgres` user what it needs outside the checkout, which that user may
// not be able to enter (a clone under root's mode-700 home), and says so when it cannot.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, isAbsolute } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { entrypointSource, PostgresTestBed } from './postgres-processes.ts';

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
});
