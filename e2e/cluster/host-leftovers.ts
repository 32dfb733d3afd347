// Finding what the cluster left on the machine: processes, mounts, cgroups, and the few host
// paths the kubelet and CNI write to regardless of their configured root directories.
import { existsSync, readdirSync, readFileSync, rmdirSync, statSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { runDir, stateDir } from './layout.ts';
import { tryRun } from './run-command.ts';

/**
 * A host path written outside our directories, and which of its entries the cluster makes: the
 * kubelet's pod logs (fixed paths), libcni's result cache, and the pod network namespaces a
 * cluster made before containerd kept them under its own state directory. `ip netns add` (a
 * user's, a CNI's, a test's) writes to /run/netns too, so there only `cni-*` is ours.
 */
export interface SharedHostPath {
  path: string;
  /** Whether an entry that appeared after `up` is the cluster's (default: every new entry is). */
  ours?: (entry: string) => boolean;
}

export const sharedHostPaths: readonly SharedHostPath[] = [
  { path: '/var/log/pods' },
  { path: '/var/log/containers' },
  { path: '/var/lib/cni' },
  { path: '/run/netns', ours: (entry) => entry.startsWith('cni-') },
];

/** For each shared host path: null when absent, else the names it held. */
export function listSharedHostPaths(
  paths: readonly SharedHostPath[] = sharedHostPaths,
): Record<string, string[] | null> {
  return Object.fromEntries(paths.map(({ path }) => [path, existsSync(path) ? readdirSync(path) : null]));
}

/**
 * Removes what the cluster added to the shared host paths since `before` was recorded, and
 * returns what of it could not be removed. A path that did not exist before goes too, unless
 * something not the cluster's is in it now or it has become a mount point: `ip netns add` turns
 * /run/netns into one, and a mount point the cluster did not make is someone else's.
 */
export async function removeNewSharedHostEntries(
  before: Record<string, string[] | null>,
  paths: readonly SharedHostPath[] = sharedHostPaths,
): Promise<string[]> {
  const mountPoints = new Set(mountPointsNow());
  const left: string[] = [];
  for (const { path, ours = () => true } of paths) {
    if (!existsSync(path)) continue;
    const had = before[path] ?? [];
    for (const entry of readdirSync(path)) {
      if (had.includes(entry) || !ours(entry)) continue;
      const full = join(path, entry);
      try {
        await rm(full, { recursive: true, force: true });
      } catch (error) {
        left.push(`${full} (${error instanceof Error ? error.message : String(error)})`);
      }
    }
    if (before[path] === null && !mountPoints.has(path) && readdirSync(path).length === 0) rmdirSync(path);
  }
  return left;
}

/** Every mount point on the machine, as /proc/self/mountinfo names it (may repeat a stacked path). */
export function mountPointsNow(): string[] {
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => (line.split(' ')[4] ?? '').replace(/\\040/g, ' '));
}

const ourPaths = [stateDir, runDir];

/** Processes whose command line names our state or run directory (every component and shim does). */
export function clusterProcesses(): { pid: number; cmdline: string }[] {
  const found: { pid: number; cmdline: string }[] = [];
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
      if (cmdline && ourPaths.some((p) => cmdline.includes(p))) found.push({ pid, cmdline });
    } catch {
      // The process ended while we looked.
    }
  }
  return found;
}

/** Mount points under our directories, and pod network namespaces, deepest first. */
export function clusterMounts(): string[] {
  return mountPointsNow()
    .filter((p) => ourPaths.some((o) => p === o || p.startsWith(`${o}/`)) || /^\/run\/netns\/cni-/.test(p))
    .sort((a, b) => b.length - a.length);
}

/** Unmounts every cluster mount (lazily when a normal unmount is refused). */
export async function unmountAll(): Promise<void> {
  for (let round = 0; round < 3; round++) {
    const mounts = clusterMounts();
    if (mounts.length === 0) return;
    for (const mount of mounts) {
      if (!(await tryRun('umount', [mount])).ok) await tryRun('umount', ['-l', mount]);
    }
  }
}

const cgroupRoot = '/sys/fs/cgroup';

/** The kubelet's pod cgroup folders (cgroup v1: one `kubepods` per controller hierarchy). */
export function podCgroups(): string[] {
  if (!existsSync(cgroupRoot)) return [];
  const found: string[] = [];
  for (const hierarchy of readdirSync(cgroupRoot)) {
    const dir = join(cgroupRoot, hierarchy, 'kubepods');
    if (existsSync(dir)) found.push(dir);
  }
  const unified = join(cgroupRoot, 'kubepods');
  if (existsSync(unified) && !found.includes(unified)) found.push(unified);
  return found;
}

/** Pids still inside the pod cgroups. */
export function podCgroupPids(): number[] {
  const pids = new Set<number>();
  const walk = (dir: string) => {
    try {
      for (const line of readFileSync(join(dir, 'cgroup.procs'), 'utf8').split('\n')) {
        if (line.trim()) pids.add(Number(line));
      }
      for (const entry of readdirSync(dir)) {
        const child = join(dir, entry);
        if (statSync(child).isDirectory()) walk(child);
      }
    } catch {
      // A cgroup removed while we walked it.
    }
  };
  podCgroups().forEach(walk);
  return [...pids];
}

/** Removes the pod cgroup folders, children first (each must be empty of processes). */
export function removePodCgroups(): void {
  const remove = (dir: string) => {
    for (const entry of readdirSync(dir)) {
      const child = join(dir, entry);
      try {
        if (statSync(child).isDirectory()) remove(child);
      } catch {
        // Gone already.
      }
    }
    try {
      rmdirSync(dir);
    } catch {
      // Still busy: reported by the leftover check.
    }
  };
  podCgroups().forEach(remove);
}
