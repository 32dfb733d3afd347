// Memory of a process as the kernel accounts it, read the same way for a Node and a Go operator.
import { readFile } from 'node:fs/promises';

export interface ProcessMemory {
  /** Resident set size now (VmRSS). */
  rssBytes: number;
  /** The highest resident set size so far (VmHWM, the kernel's high-water mark). */
  peakRssBytes: number;
}

/** Reads /proc/<pid>/status. */
export async function readProcessMemory(pid: number): Promise<ProcessMemory> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) => {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
    if (!match?.[1]) throw new Error(`/proc/${pid}/status has no ${field}`);
    return Number(match[1]) * 1024;
  };
  return { rssBytes: kib('VmRSS'), peakRssBytes: kib('VmHWM') };
}
