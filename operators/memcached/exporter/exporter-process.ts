// The real memcached-exporter binary on loopback, for its integration test and its benchmark: built
// (or found in the version-keyed cache) by tools/build-binaries.sh, started next to a memcached,
// and scraped the way Prometheus does.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  freeLoopbackPort,
  logTail,
  repoRoot,
  sourceKeyedBinaryPath,
  startProcess,
  waitUntil,
  type ManagedProcess,
} from '@homeostat/testing';

const exec = promisify(execFile);

/** Path of the exporter binary for the current sources, building it first when it is not cached. */
export async function memcachedExporterBinary(): Promise<string> {
  const script = join(repoRoot, 'tools', 'build-binaries.sh');
  // A cold build of the standard library takes a minute on two busy cores.
  await exec('bash', [script, 'memcached-exporter'], { timeout: 10 * 60_000 });
  return sourceKeyedBinaryPath('memcached-exporter');
}

/** A running exporter: its process and the URL Prometheus would scrape. */
export interface RunningExporter {
  readonly process: ManagedProcess;
  readonly metricsUrl: string;
}

/**
 * Starts the exporter for `memcachedAddress` (host:port), with `extraArgs` after it (the pod's
 * SASL flags); resolves once it serves /healthz.
 */
export async function startMemcachedExporter(options: {
  binary: string;
  memcachedAddress: string;
  extraArgs?: readonly string[];
  logDir: string;
}): Promise<RunningExporter> {
  const port = await freeLoopbackPort();
  const logFile = join(options.logDir, 'memcached-exporter.log');
  const started = startProcess({
    name: 'memcached-exporter',
    command: options.binary,
    args: [
      `--memcached.address=${options.memcachedAddress}`,
      ...(options.extraArgs ?? []),
      `--web.listen-address=127.0.0.1:${port}`,
    ],
    logFile,
  });
  const base = `http://127.0.0.1:${port}`;
  const exited = started.exited.then((how) => `memcached-exporter exited (${String(how)})`);
  await waitUntil(
    `memcached-exporter on port ${port}`,
    async () => {
      try {
        return (await fetch(`${base}/healthz`)).ok;
      } catch {
        return false;
      }
    },
    { timeoutMs: 10_000, intervalMs: 20, abort: exited, describe: () => logTail(logFile) },
  );
  return { process: started, metricsUrl: `${base}/metrics` };
}

/** One scrape: series (`name{labels}` as written) → value; throws unless the answer is 200. */
export async function scrape(metricsUrl: string): Promise<Map<string, number>> {
  const response = await fetch(metricsUrl);
  if (!response.ok) throw new Error(`GET ${metricsUrl}: ${response.status}`);
  return parseExposition(await response.text());
}

/** Parses Prometheus text exposition lines (`series value`), skipping comments. */
export function parseExposition(text: string): Map<string, number> {
  const series = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const space = line.lastIndexOf(' ');
    series.set(line.slice(0, space), Number(line.slice(space + 1)));
  }
  return series;
}
