import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, closeSync, readFileSync, existsSync } from 'node:fs';

/** A long-running server process started for a test, in its own process group. */
export interface ManagedProcess {
  readonly name: string;
  readonly pid: number;
  readonly logFile: string;
  /** Resolves with the exit code (or signal name) once the process has ended. */
  readonly exited: Promise<number | string>;
  /** True until the process has exited. */
  isRunning(): boolean;
  /** SIGTERM to the whole group, SIGKILL after `graceMs`; resolves when it is gone. */
  stop(graceMs?: number): Promise<void>;
}

export interface StartProcessOptions {
  name: string;
  command: string;
  args: readonly string[];
  /** stdout and stderr are appended here, so a failed start can show why. */
  logFile: string;
  env?: NodeJS.ProcessEnv;
  /** Working directory (default: ours); one the process's user can enter, when it runs as another. */
  cwd?: string;
}

// Every process group this module started and has not yet seen exit. On any exit of the Node
// process we kill them synchronously, so a test run that ends early leaves nothing behind.
const liveGroups = new Set<number>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const pgid of liveGroups) killGroup(pgid, 'SIGKILL');
  });
}

function killGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

/** Where `setpriv` is, if present: it lets the kernel kill our servers when their parent dies. */
const setprivPath = ['/usr/bin/setpriv', '/bin/setpriv'].find((p) => existsSync(p));

/**
 * `command args` wrapped so that the kernel SIGKILLs it when this Node process dies, even by
 * SIGKILL (`setpriv --pdeathsig`; unwrapped where setpriv is missing). For children that must not
 * outlive their parent but are not servers (a benchmark run by the smoke runner).
 */
export function diesWithParent(command: string, args: readonly string[]): [file: string, args: string[]] {
  return setprivPath
    ? [setprivPath, ['--pdeathsig', 'SIGKILL', '--', command, ...args]]
    : [command, [...args]];
}

/**
 * Starts `command` detached in a new process group. When this Node process dies, even by
 * SIGKILL, the kernel sends the child SIGKILL too (`setpriv --pdeathsig`); on an ordinary exit the
 * exit hook kills the group. Either way no server outlives the test run that started it.
 */
export function startProcess(options: StartProcessOptions): ManagedProcess {
  installExitHook();
  const logFd = openSync(options.logFile, 'a');
  const [file, args] = diesWithParent(options.command, options.args);
  let child: ChildProcess;
  try {
    child = spawn(file, args, {
      detached: true,
      stdio: ['ignore', logFd, logFd],
      env: options.env ?? process.env,
      ...(options.cwd ? { cwd: options.cwd } : {}),
    });
  } finally {
    closeSync(logFd);
  }
  const pid = child.pid;
  if (pid === undefined) {
    throw new Error(`could not start ${options.name} (${options.command}): no pid`);
  }
  liveGroups.add(pid);
  let running = true;
  const exited = new Promise<number | string>((resolve) => {
    child.once('exit', (code, signal) => {
      running = false;
      liveGroups.delete(pid);
      resolve(code ?? signal ?? 'unknown');
    });
    child.once('error', (error) => {
      running = false;
      liveGroups.delete(pid);
      resolve(`spawn error: ${error.message}`);
    });
  });
  // The test runner must be free to exit while a server is still up; cleanup is ours.
  child.unref();

  return {
    name: options.name,
    pid,
    logFile: options.logFile,
    exited,
    isRunning: () => running,
    async stop(graceMs = 5000) {
      if (!running) return;
      killGroup(pid, 'SIGTERM');
      const timer = setTimeout(() => killGroup(pid, 'SIGKILL'), graceMs);
      try {
        await exited;
      } finally {
        clearTimeout(timer);
      }
      // Anything the server itself started shares its group; make sure it is gone too.
      killGroup(pid, 'SIGKILL');
    },
  };
}

/** The last `lines` lines of a process's log, for error messages. */
export function logTail(logFile: string, lines = 30): string {
  try {
    return readFileSync(logFile, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}
