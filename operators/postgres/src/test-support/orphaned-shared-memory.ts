// A PostgreSQL killed with SIGKILL leaves two kinds of shared memory behind: its System V interlock
// segment and its POSIX dynamic shared memory (/dev/shm/PostgreSQL.*). Only a postmaster restarted
// on the same data directory removes them. The test beds kill instances and delete their data
// directories, so every test leaked both, until the kernel's limit of 4096 segments
// (kernel.shmmni) made every initdb on the machine fail ("could not create shared memory segment";
// 4 GiB of /dev/shm held besides). So a bed reads what an instance holds before it kills it and
// releases that once no process is attached any more; and each test run first sweeps what runs
// killed before it left: a segment nobody is attached to, and, while no process of the test user
// lives, a file nobody maps (a live postmaster keeps pinned segments nobody maps: another test run
// beside this one, CI on the same machine). A postmaster attaches to what it creates right away;
// the sweep's age guard keeps it from racing that moment.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';

const dynamicSharedMemoryDir = '/dev/shm';
const dynamicSharedMemoryPrefix = 'PostgreSQL.';

export interface ReleasedSharedMemory {
  /** System V segments removed (`ipcrm -m`). */
  segments: number;
  /** /dev/shm files unlinked. */
  files: number;
}

/** The uid the test beds run PostgreSQL as: `postgres` when we are root, ourselves otherwise. */
export function postgresTestUid(): number {
  const uid = process.getuid?.() ?? 0;
  if (uid !== 0) return uid;
  return Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
}

interface Segment {
  id: number;
  attached: number;
  owner: number;
  /** When it was created, in Unix seconds. */
  created: number;
}

/** Every System V segment, from /proc/sysvipc/shm. */
function segments(): Segment[] {
  return readFileSync('/proc/sysvipc/shm', 'utf8')
    .trim()
    .split('\n')
    .slice(1)
    .map((row) => {
      // key shmid perms size cpid lpid nattch uid gid cuid cgid atime dtime ctime ...
      const f = row.trim().split(/\s+/).map(Number);
      return { id: f[1] ?? -1, attached: f[6] ?? 0, owner: f[7] ?? -1, created: f[13] ?? 0 };
    });
}

/** System V segments of `uid` that no process is attached to, created at least `minAgeMs` ago. */
export function detachedSegments(uid: number, minAgeMs: number): number[] {
  const newest = (Date.now() - minAgeMs) / 1000;
  return segments()
    .filter((s) => s.attached === 0 && s.owner === uid && s.created <= newest)
    .map((s) => s.id);
}

/** What a set of processes holds: the System V segments they attach and the /dev/shm files they map. */
export interface HeldSharedMemory {
  segments: number[];
  files: string[];
}

/**
 * Read from /proc/<pid>/maps: a System V segment shows as `/SYSV<key> (deleted)` with the segment's
 * id as its inode, a POSIX one as its /dev/shm path. A process that exits while we read is skipped.
 */
export function sharedMemoryHeldBy(pids: Iterable<number>): HeldSharedMemory {
  const segments = new Set<number>();
  const files = new Set<string>();
  for (const pid of pids) {
    let maps: string;
    try {
      maps = readFileSync(`/proc/${pid}/maps`, 'utf8');
    } catch {
      continue;
    }
    for (const line of maps.split('\n')) {
      const [, , , , inode, path] = line.trim().split(/\s+/);
      if (path?.startsWith('/SYSV') && inode !== undefined) segments.add(Number(inode));
      else if (path?.startsWith(`${dynamicSharedMemoryDir}/`)) files.add(path);
    }
  }
  return { segments: [...segments], files: [...files] };
}

function livePids(): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number);
}

/** Every /dev/shm path some live process maps. */
function mappedSharedMemory(): Set<string> {
  return new Set(sharedMemoryHeldBy(livePids()).files);
}

/**
 * PostgreSQL's /dev/shm files of `uid` that no process maps, last changed at least `minAgeMs` ago
 * (0: whatever their age; a file changed this very millisecond can carry a ctime past Date.now()'s
 * whole milliseconds).
 */
export function unmappedDynamicSharedMemory(uid: number, minAgeMs: number): string[] {
  const newest = minAgeMs > 0 ? Date.now() - minAgeMs : Infinity;
  const mapped = mappedSharedMemory();
  const found: string[] = [];
  for (const name of readdirSync(dynamicSharedMemoryDir)) {
    if (!name.startsWith(dynamicSharedMemoryPrefix)) continue;
    const path = join(dynamicSharedMemoryDir, name);
    try {
      const stat = statSync(path);
      if (stat.uid === uid && stat.ctimeMs <= newest && !mapped.has(path)) found.push(path);
    } catch {
      // removed by its postmaster while we looked
    }
  }
  return found;
}

function removeSegment(shmid: number): boolean {
  try {
    execFileSync('ipcrm', ['-m', String(shmid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false; // removed meanwhile (a restarted postmaster removes its predecessor's)
  }
}

function removeFile(path: string): boolean {
  try {
    unlinkSync(path);
    return true;
  } catch {
    return false; // removed meanwhile
  }
}

/**
 * Releases what killed processes held (`sharedMemoryHeldBy` read before the kill) once none of them
 * is attached any more. Every process of a postmaster attaches its System V segment, so a segment
 * with no one attached means all of them are gone, and nobody maps their /dev/shm files either.
 * Not before: what is still held after `timeoutMs` is left to the next sweep.
 */
export async function releaseSharedMemory(
  held: HeldSharedMemory,
  timeoutMs = 5000,
): Promise<ReleasedSharedMemory> {
  // The processes were killed together, but the last of them may still be exiting.
  const deadline = Date.now() + timeoutMs;
  const stillAttached = () => segments().some((s) => held.segments.includes(s.id) && s.attached > 0);
  while (stillAttached()) {
    if (Date.now() >= deadline) return { segments: 0, files: 0 };
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return {
    segments: held.segments.filter(removeSegment).length,
    files: held.files.filter(removeFile).length,
  };
}

/** Whether some live process runs as `uid`. */
function someProcessRunsAs(uid: number): boolean {
  return livePids().some((pid) => {
    try {
      return statSync(`/proc/${pid}`).uid === uid;
    } catch {
      return false; // exited while we looked
    }
  });
}

/**
 * PostgreSQL's /dev/shm files of `uid` that belong to no live instance: unmapped and old, and only
 * while no process of `uid` lives. A running postmaster pins segments (dsm_pin_segment) that no
 * process may map for a while; which instance a file belongs to cannot be read from outside.
 */
export function orphanedDynamicSharedMemory(uid: number, minAgeMs: number): string[] {
  return someProcessRunsAs(uid) ? [] : unmappedDynamicSharedMemory(uid, minAgeMs);
}

/**
 * Removes the shared memory PostgreSQL processes of `uid` left behind when killed before this run
 * (a test process killed takes its instances with it): segments no one is attached to and files no
 * one maps, older than `minAgeMs`.
 */
export function releaseOrphanedSharedMemory(
  uid = postgresTestUid(),
  minAgeMs = 10_000,
): ReleasedSharedMemory {
  return {
    segments: detachedSegments(uid, minAgeMs).filter(removeSegment).length,
    files: orphanedDynamicSharedMemory(uid, minAgeMs).filter(removeFile).length,
  };
}
