// Runs host tools (ip, iptables, ctr, kubectl, docker) and turns a failure into an error that
// says which command failed and what it printed.
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

export interface RunOptions {
  /** Text written to the command's stdin. */
  input?: string;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  timeoutMs?: number;
}

/** Runs a command to completion and returns its stdout; throws with stderr on a non-zero exit. */
export async function run(
  command: string,
  args: readonly string[],
  options: RunOptions = {},
): Promise<string> {
  if (options.input !== undefined) return runWithInput(command, args, options.input, options);
  try {
    const { stdout } = await execFileAsync(command, [...args], {
      maxBuffer: 256 * 1024 * 1024,
      env: options.env ?? process.env,
      ...(options.cwd ? { cwd: options.cwd } : {}),
      ...(options.timeoutMs ? { timeout: options.timeoutMs } : {}),
    });
    return stdout;
  } catch (error) {
    const e = error as { stderr?: string; stdout?: string; code?: number | string };
    const output = (e.stderr ?? '').trim() || (e.stdout ?? '').trim() || String(error);
    throw new Error(`\`${command} ${args.join(' ')}\` failed (${e.code ?? 'error'}): ${output}`, {
      cause: error,
    });
  }
}

/** Like `run`, but never throws: resolves with whether it succeeded and its output. */
export async function tryRun(
  command: string,
  args: readonly string[],
  options: RunOptions = {},
): Promise<{ ok: boolean; stdout: string; error?: string }> {
  try {
    return { ok: true, stdout: await run(command, args, options) };
  } catch (error) {
    return { ok: false, stdout: '', error: (error as Error).message };
  }
}

function runWithInput(
  command: string,
  args: readonly string[],
  input: string,
  options: RunOptions,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, [...args], {
      env: options.env ?? process.env,
      stdio: ['pipe', 'pipe', 'pipe'],
      ...(options.cwd ? { cwd: options.cwd } : {}),
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve(stdout);
      else
        reject(
          new Error(`\`${command} ${args.join(' ')}\` failed (${code}): ${stderr.trim() || stdout.trim()}`),
        );
    });
    child.stdin.end(input);
  });
}
