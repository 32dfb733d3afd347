// Docker builds the images. Debian's dockerd runs containers on these machines but nothing
// starts it, so when no daemon answers we start one for the duration of the build, configured
// to leave the machine's network alone (no bridge, no iptables rules, no forwarding change),
// and stop it again afterwards.
import { spawn } from 'node:child_process';
import { existsSync, openSync, closeSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { cacheDir, logTail, waitUntil } from '@homeostat/testing';
import { tryRun } from '../cluster/run-command.ts';

/** The Docker CLI to use: Debian's own client matches Debian's daemon (API 1.41). */
export const dockerCli = existsSync('/usr/bin/docker') ? '/usr/bin/docker' : 'docker';

/** A Docker daemon this process may have started; `stop()` stops it only in that case. */
export interface DockerDaemon {
  stop(): Promise<void>;
}

/** Makes sure a Docker daemon answers on the default socket, starting one when none does. */
export async function ensureDockerDaemon(log: (line: string) => void): Promise<DockerDaemon> {
  if ((await tryRun(dockerCli, ['info', '--format', '{{.ServerVersion}}'])).ok)
    return { stop: async () => {} };
  const logDir = join(cacheDir(), 'images');
  await mkdir(logDir, { recursive: true });
  const logFile = join(logDir, 'dockerd.log');
  log(`starting dockerd for the build (log: ${logFile})`);
  const fd = openSync(logFile, 'a');
  const daemon = spawn(
    'dockerd',
    [
      '--iptables=false',
      '--ip6tables=false',
      '--ip-forward=false',
      '--ip-masq=false',
      '--bridge=none',
      '--pidfile=/run/homeostat-dockerd.pid',
      '--log-level=warn',
    ],
    { detached: true, stdio: ['ignore', fd, fd] },
  );
  closeSync(fd);
  let exited: string | undefined;
  const exit = new Promise<string>((resolve) =>
    daemon.once('exit', (code, signal) => {
      exited = `dockerd exited (${code ?? signal})`;
      resolve(exited);
    }),
  );
  const stop = async () => {
    if (exited !== undefined || daemon.pid === undefined) return;
    process.kill(daemon.pid, 'SIGTERM');
    const timer = setTimeout(() => daemon.kill('SIGKILL'), 20_000);
    await exit;
    clearTimeout(timer);
  };
  try {
    await waitUntil('dockerd', async () => (await tryRun(dockerCli, ['info'])).ok, {
      timeoutMs: 60_000,
      intervalMs: 500,
      abort: exit,
      describe: () => logTail(logFile),
    });
  } catch (error) {
    await stop();
    throw error;
  }
  return { stop };
}
