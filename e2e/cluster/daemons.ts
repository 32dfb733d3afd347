// The cluster's components outlive the command that starts them (`cluster:up` returns while the
// cluster keeps running), so unlike libs/testing's startProcess they are started in their own
// session with no parent-death signal, and found again later through pid files.
import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, readdirSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { paths } from './layout.ts';
import { setTimeout as sleep } from 'node:timers/promises';

export interface DaemonSpec {
  name: string;
  command: string;
  args: readonly string[];
  env?: NodeJS.ProcessEnv;
}

interface PidRecord {
  pid: number;
  command: string;
}

const pidFile = (name: string) => join(paths.pids, `${name}.json`);
/** Each component's stdout and stderr. */
export const logFile = (name: string): string => join(paths.logs, `${name}.log`);

/** Starts a component detached (own session, survives this process); records its pid. */
export async function startDaemon(spec: DaemonSpec): Promise<number> {
  await mkdir(paths.pids, { recursive: true });
  await mkdir(paths.logs, { recursive: true });
  const fd = openSync(logFile(spec.name), 'a');
  try {
    const child = spawn(spec.command, [...spec.args], {
      detached: true,
      stdio: ['ignore', fd, fd],
      env: spec.env ?? process.env,
    });
    const pid = child.pid;
    if (pid === undefined) throw new Error(`could not start ${spec.name} (${spec.command})`);
    child.unref();
    const record: PidRecord = { pid, command: spec.command };
    await writeFile(pidFile(spec.name), JSON.stringify(record));
    return pid;
  } finally {
    closeSync(fd);
  }
}

function readRecord(name: string): PidRecord | undefined {
  try {
    return JSON.parse(readFileSync(pidFile(name), 'utf8')) as PidRecord;
  } catch {
    return undefined;
  }
}

/** True when the pid is alive and still runs the same binary (a pid may be reused after a reboot). */
function isOurs(record: PidRecord): boolean {
  try {
    const argv0 = readFileSync(`/proc/${record.pid}/cmdline`, 'utf8').split('\0')[0];
    const state = readFileSync(`/proc/${record.pid}/stat`, 'utf8').split(') ')[1]?.[0];
    return argv0 === record.command && state !== 'Z';
  } catch {
    return false;
  }
}

/** Whether the named component is running. */
export function daemonRunning(name: string): boolean {
  const record = readRecord(name);
  return record !== undefined && isOurs(record);
}

/** Resolves with a reason once the component has died; polls, since it is not our child. */
export function daemonDied(name: string): Promise<string> {
  return new Promise((resolve) => {
    const timer = setInterval(() => {
      if (!daemonRunning(name)) {
        clearInterval(timer);
        resolve(`${name} exited; the end of ${logFile(name)}:`);
      }
    }, 500);
    timer.unref();
  });
}

/** SIGTERM to the component's process group, SIGKILL after `graceMs`; forgets its pid. */
export async function stopDaemon(name: string, graceMs = 10_000): Promise<void> {
  const record = readRecord(name);
  if (record && isOurs(record)) {
    signalGroup(record.pid, 'SIGTERM');
    const deadline = Date.now() + graceMs;
    while (isOurs(record) && Date.now() < deadline) await sleep(100);
    if (isOurs(record)) signalGroup(record.pid, 'SIGKILL');
    while (isOurs(record)) await sleep(50);
  }
  await rm(pidFile(name), { force: true });
}

/** Components that have a pid file, in no particular order. */
export function recordedDaemons(): string[] {
  if (!existsSync(paths.pids)) return [];
  return readdirSync(paths.pids)
    .filter((f) => f.endsWith('.json'))
    .map((f) => f.slice(0, -'.json'.length));
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  for (const target of [-pid, pid]) {
    try {
      process.kill(target, signal);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
    }
  }
}
