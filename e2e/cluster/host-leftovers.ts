// Finding what the cluster left on the machine: processes, mounts, cgroups, and the few host
// paths the kubelet and CNI write to regardless of their configured root directories.
import { existsSync, readdirSync, readFileSync, rmdirSync, statSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { runDir, stateDir } from './layout.ts';
import { tryRun } from './run-command.ts';

/**
 * Host paths written outside our directories: the kubelet's pod logs (fixed paths) and
 * libcni's result cache. Down removes what appeared in them after `up` recorded them.
 */
export const sharedHostPaths = ['/var/log/pods', '/var/log/containers', '/var/lib/cni', '/run/netns'];

/** For each shared host path: null when absent, else the names it held. */
export function listSharedHostPaths(): Record<string, string[] | null> {
  return Object.fromEntries(sharedHostPaths.map((p) => [p, existsSync(p) ? readdirSync(p) : null]));
}

/** Removes what appeared in the shared host paths since `before` (whole paths that did not exist). */
export async function removeNewSharedHostEntries(before: Record<string, string[] | null>): Promise<void> {
  for (const path of sharedHostPaths) {
    if (!existsSync(path)) continue;
    const had = before[path];
    if (had === null || had === undefined) {
      await rm(path, { recursive: true, force: true });
      continue;
    }
    for (const entry of readdirSync(path)) {
      if (!had.includes(entry)) await rm(join(path, entry), { recursive: true, force: true });
    }
  }
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
  const mountPoints = readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((line) => line.split(' ')[4] ?? '')
    .map((p) => p.replace(/\\040/g, ' '));
  return mountPoints
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
