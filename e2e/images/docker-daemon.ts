// Docker builds the images. Debian's dockerd runs containers on these machines but nothing
// starts it, so when no daemon answers we start one for the duration of the build, configured
// to leave the machine's network alone (no bridge, no iptables rules, no forwarding change),
// and stop it again afterwards. The kind cluster keeps a daemon of its own running (a `place`
// with its own socket and storage, `keepRunning`), so no image build stops its nodes.
import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { cacheDir, logTail, waitUntil } from '@homeostat/testing';
import { mountPointsNow } from '../cluster/host-leftovers.ts';
import { tryRun } from '../cluster/run-command.ts';

/** dockerd's exec root when none is given (/var/run is a link to /run, as mountinfo shows it). */
const defaultExecRoot = '/run/docker';

/** The Docker CLI to use: Debian's own client matches Debian's daemon (API 1.41). */
export const dockerCli = existsSync('/usr/bin/docker') ? '/usr/bin/docker' : 'docker';

/** A Docker daemon this process may have started; `stop()` stops it only in that case. */
export interface DockerDaemon {
  stop(): Promise<void>;
}

/** Where a daemon of its own keeps its socket, images, state and log. */
export interface DockerDaemonPlace {
  /** unix:///… socket; the Docker CLI reaches it through DOCKER_HOST. */
  host: string;
  dataRoot: string;
  execRoot: string;
  pidFile: string;
  logFile: string;
  /** More dockerd arguments (a runtime of its own, say). */
  extraArgs?: readonly string[];
}

export interface EnsureDockerDaemonOptions {
  /** A daemon of its own instead of the default socket's. */
  place?: DockerDaemonPlace;
  /** Leave a daemon this call starts running after the process exits (`stop()` does nothing). */
  keepRunning?: boolean;
}

/** Makes sure a Docker daemon answers (at `place`, or where DOCKER_HOST or the default socket says), starting one when none does. */
export async function ensureDockerDaemon(
  log: (line: string) => void,
  options: EnsureDockerDaemonOptions = {},
): Promise<DockerDaemon> {
  const { place } = options;
  const env = place ? { ...process.env, DOCKER_HOST: place.host } : process.env;
  if ((await tryRun(dockerCli, ['info', '--format', '{{.ServerVersion}}'], { env })).ok)
    return { stop: async () => {} };
  const logFile = place?.logFile ?? join(cacheDir(), 'images', 'dockerd.log');
  await mkdir(dirname(logFile), { recursive: true });
  log(`starting dockerd${place ? ` at ${place.host}` : ' for the build'} (log: ${logFile})`);
  const fd = openSync(logFile, 'a');
  const daemon = spawn(
    'dockerd',
    [
      '--iptables=false',
      '--ip6tables=false',
      '--ip-forward=false',
      '--ip-masq=false',
      '--bridge=none',
      `--pidfile=${place?.pidFile ?? '/run/homeostat-dockerd.pid'}`,
      '--log-level=warn',
      ...(place
        ? [
            `--host=${place.host}`,
            `--data-root=${place.dataRoot}`,
            `--exec-root=${place.execRoot}`,
            ...(place.extraArgs ?? []),
          ]
        : []),
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
    const left = await releaseDaemonMounts(place?.execRoot ?? defaultExecRoot);
    if (left.length > 0) throw new Error(`dockerd stopped but left mounts behind: ${left.join(', ')}`);
  };
  try {
    await waitUntil('dockerd', async () => (await tryRun(dockerCli, ['info'], { env })).ok, {
      timeoutMs: 60_000,
      intervalMs: 500,
      abort: exit,
      describe: () => logTail(logFile),
    });
  } catch (error) {
    await stop();
    throw error;
  }
  if (options.keepRunning) {
    daemon.unref();
    return { stop: async () => {} };
  }
  return { stop };
}

/**
 * Stops a daemon kept running at `place` (its pid file says which process), waiting until it has
 * exited, and returns the mounts it left that could not be removed (none on a clean stop).
 */
export async function stopDockerDaemon(place: DockerDaemonPlace): Promise<string[]> {
  let pid = 0;
  try {
    pid = Number(readFileSync(place.pidFile, 'utf8').trim());
  } catch {
    // No pid file: no daemon to stop, but a killed one may have left its mounts.
  }
  const alive = () => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  if (pid && alive()) {
    process.kill(pid, 'SIGTERM');
    await waitUntil(`dockerd ${pid} exited`, async () => !alive(), { timeoutMs: 60_000, intervalMs: 250 });
  }
  return releaseDaemonMounts(place.execRoot);
}

/**
 * Unmounts the network-namespace mounts a stopped dockerd leaves under its exec root (its
 * `netns/default`, and one per container a killed daemon never tore down) and returns those still
 * mounted. Only for a daemon this project started and stopped: the exec root is then its own.
 */
export async function releaseDaemonMounts(execRoot: string): Promise<string[]> {
  const netnsDir = join(execRoot, 'netns');
  const ours = () => mountPointsNow().filter((p) => p === netnsDir || p.startsWith(`${netnsDir}/`));
  for (let round = 0; round < 3 && ours().length > 0; round++) {
    for (const mount of ours().sort((a, b) => b.length - a.length)) {
      if (!(await tryRun('umount', [mount])).ok) await tryRun('umount', ['-l', mount]);
    }
  }
  return ours();
}
