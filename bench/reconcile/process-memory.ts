// Memory and CPU time of a process as the kernel accounts them, read the same way for a Node and a
// Go operator.
import { readFile } from 'node:fs/promises';

export interface ProcessMemory {
  /** Resident set size now (VmRSS). */
  rssBytes: number;
  /** The highest resident set size so far (VmHWM, the kernel's high-water mark). */
  peakRssBytes: number;
  /** Of the resident set: anonymous pages (heaps, stacks; RssAnon). */
  anonymousBytes: number;
  /** Of the resident set: pages of mapped files, mostly the executable's own code and data (RssFile). */
  fileBytes: number;
}

/** Reads /proc/<pid>/status. */
export async function readProcessMemory(pid: number): Promise<ProcessMemory> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) => {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
    if (!match?.[1]) throw new Error(`/proc/${pid}/status has no ${field}`);
    return Number(match[1]) * 1024;
  };
  return {
    rssBytes: kib('VmRSS'),
    peakRssBytes: kib('VmHWM'),
    anonymousBytes: kib('RssAnon'),
    fileBytes: kib('RssFile'),
  };
}

/** CPU seconds (user + system) the process has used so far, from /proc/<pid>/stat. */
export async function readProcessCpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command (which may hold spaces) start after its closing parenthesis:
  // state is field 3, utime field 14, stime field 15, in clock ticks (100 per second on Linux).
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  if (!Number.isFinite(ticks)) throw new Error(`/proc/${pid}/stat has no utime/stime: ${stat}`);
  return ticks / 100;
}
