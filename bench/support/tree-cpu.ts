// CPU seconds used by this process and everything it started (servers, tools, their exited
// children), from /proc. On a shared machine a wall-clock figure moves with other jobs' load; the
// CPU a piece of work burns does not, so a benchmark can print both.
import { readdirSync, readFileSync } from 'node:fs';

const ticksPerSecond = 100; // USER_HZ, 100 on every Linux this runs on

interface Stat {
  readonly ppid: number;
  /** utime + stime + cutime + cstime: its own CPU and that of the children it has waited for. */
  readonly ticks: number;
}

function readStat(pid: string): Stat | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name is in parentheses and may hold spaces: the fields start after its ')'.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    const n = (i: number) => Number(fields[i] ?? 0);
    return { ppid: n(1), ticks: n(11) + n(12) + n(13) + n(14) };
  } catch {
    return undefined; // gone meanwhile
  }
}

/** CPU seconds of this process's whole tree so far (children that exited count once reaped). */
export function treeCpuSeconds(root = process.pid): number {
  const stats = new Map<number, Stat>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const stat = readStat(name);
    if (stat) stats.set(Number(name), stat);
  }
  const inTree = new Set([root]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const [pid, stat] of stats) {
      if (!inTree.has(pid) && inTree.has(stat.ppid)) {
        inTree.add(pid);
        grew = true;
      }
    }
  }
  let ticks = 0;
  for (const pid of inTree) ticks += stats.get(pid)?.ticks ?? 0;
  return ticks / ticksPerSecond;
}
