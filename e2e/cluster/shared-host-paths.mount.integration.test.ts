// The teardown's handling of host paths the cluster shares with the machine, on real mounts of
// the real host: a directory that became a mount point of someone else's while the cluster ran
// (what `ip netns add` does to /run/netns) stays, with what others put in it, and the cluster's
// own entries still go.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, rmdirSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  listSharedHostPaths,
  mountPointsNow,
  removeNewSharedHostEntries,
  type SharedHostPath,
} from './host-leftovers.ts';
import { run, tryRun } from './run-command.ts';

const isRoot = process.getuid?.() === 0;
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const isMountPoint = (path: string) => mountPointsNow().includes(path);

async function scratchDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'homeostat-shared-paths-'));
  cleanups.push(async () => {
    while (mountPointsNow().some((p) => p.startsWith(`${dir}/`))) {
      const deepest = mountPointsNow()
        .filter((p) => p.startsWith(`${dir}/`))
        .sort((a, b) => b.length - a.length)[0];
      if (deepest === undefined || !(await tryRun('umount', [deepest])).ok) break;
    }
    await rm(dir, { recursive: true, force: true });
  });
  return dir;
}

describe.skipIf(!isRoot)('shared host paths at teardown, on real mounts (as root)', () => {
  it("keeps a path that became someone else's mount point and their entries; removes the cluster's", async () => {
    const path = join(await scratchDir(), 'netns');
    const paths: SharedHostPath[] = [{ path, ours: (entry) => entry.startsWith('cni-') }];
    const before = listSharedHostPaths(paths);
    expect(before).toEqual({ [path]: null });

    // The cluster writes its entry; then someone makes the directory a mount point of its own
    // (a recursive bind onto itself, as `ip netns add` does) and adds theirs.
    mkdirSync(join(path, 'cni-0123'), { recursive: true });
    writeFileSync(join(path, 'cni-0123', 'state'), 'x');
    await run('mount', ['--rbind', path, path]);
    await run('mount', ['--make-shared', path]);
    writeFileSync(join(path, 'theirs'), '');

    const left = await removeNewSharedHostEntries(before, paths);
    expect(left).toEqual([]);
    expect(readdirSync(path)).toEqual(['theirs']);
    expect(isMountPoint(path), 'the mount point someone else made stays').toBe(true);
  });

  it('removes a path the cluster created when nothing else is in it, and reports an entry it cannot remove', async () => {
    const dir = await scratchDir();
    const created = join(dir, 'logs');
    const busy = join(dir, 'busy');
    mkdirSync(busy);
    const paths: SharedHostPath[] = [{ path: created }, { path: busy }];
    const before = listSharedHostPaths(paths);

    mkdirSync(join(created, 'pod-a'), { recursive: true });
    // An entry of the cluster's that is a mount point in use: it cannot go, and is reported.
    mkdirSync(join(busy, 'pod-b'));
    await run('mount', ['-t', 'tmpfs', 'tmpfs', join(busy, 'pod-b')]);

    const left = await removeNewSharedHostEntries(before, paths);
    expect(existsSync(created), 'absent before, empty now: removed').toBe(false);
    expect(left).toHaveLength(1);
    expect(left[0]).toContain(join(busy, 'pod-b'));
  });

  // The machine as `npm test` meets it on a fresh machine: no /run/netns until a test's
  // `ip netns add` makes it, a mount point that `ip netns delete` leaves.
  it.skipIf(existsSync('/run/netns'))(
    'a namespace added and deleted on the machine while the cluster ran leaves teardown nothing to fail on',
    async () => {
      const path = '/run/netns';
      const paths: SharedHostPath[] = [{ path, ours: (entry) => entry.startsWith('cni-') }];
      const before = listSharedHostPaths(paths);
      const name = `homeostat-test-${randomBytes(4).toString('hex')}`;
      cleanups.push(async () => {
        await tryRun('ip', ['netns', 'delete', name]);
        if (isMountPoint(path)) await run('umount', [path]);
        if (existsSync(path) && readdirSync(path).length === 0) rmdirSync(path);
      });
      await run('ip', ['netns', 'add', name]);
      writeFileSync(join(path, 'cni-fedcba'), ''); // a pod namespace's file, its mount already gone
      await run('ip', ['netns', 'delete', name]);
      expect(isMountPoint(path), '`ip netns` left /run/netns a mount point').toBe(true);

      expect(await removeNewSharedHostEntries(before, paths)).toEqual([]);
      expect(readdirSync(path)).toEqual([]);
    },
  );
});
