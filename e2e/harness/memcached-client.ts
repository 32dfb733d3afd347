// A memcached text-protocol session from inside the cluster, as an application would open one:
// a client pod (running the memcached image, which has bash) stores a value through a host name,
// reads it back, and reads a key nobody stored.
import { randomBytes } from 'node:crypto';
import { runClientPod, type ClientPodResult } from './workloads.ts';

/** The memcache user of the official image (and of our stand-in). */
export const memcacheUid = 11211;

// Over bash's /dev/tcp. Prints every reply line, so the test sees exactly what came back. bash's
// connect has no timeout of its own; with one given, a first connection under `timeout` ends a
// session whose packets are dropped in that many seconds instead of TCP's two minutes.
function clientScript(
  host: string,
  port: number,
  key: string,
  value: string,
  connectTimeout?: number,
): string {
  return [
    'set -eu',
    ...(connectTimeout ? [`timeout ${connectTimeout} bash -c 'exec 3<>/dev/tcp/${host}/${port}'`] : []),
    `exec 3<>/dev/tcp/${host}/${port}`,
    `printf 'set ${key} 0 0 ${value.length}\\r\\n${value}\\r\\n' >&3`,
    'IFS= read -r -t 10 reply <&3; echo "set: ${reply%$\'\\r\'}"',
    `printf 'get ${key}\\r\\n' >&3`,
    'for i in 1 2 3; do IFS= read -r -t 10 reply <&3; echo "get: ${reply%$\'\\r\'}"; done',
    `printf 'get ${key}-never-set\\r\\n' >&3`,
    'IFS= read -r -t 10 reply <&3; echo "miss: ${reply%$\'\\r\'}"',
    "printf 'quit\\r\\n' >&3",
  ].join('\n');
}

export interface SetGetResult extends ClientPodResult {
  /** The reply lines a working memcached gives for this session. */
  expected: string[];
  /** The reply lines that came back. */
  lines: string[];
}

/** Runs one set/get/miss session against `host:port` from a client pod in `namespace`. */
export async function memcachedSetGet(options: {
  namespace: string;
  host: string;
  port?: number;
  image: string;
  /** The client pod's labels. */
  labels?: Readonly<Record<string, string>>;
  /** Seconds a connection may take before the session fails (default: TCP's own, minutes). */
  connectTimeoutSeconds?: number;
}): Promise<SetGetResult> {
  const key = `e2e-${randomBytes(4).toString('hex')}`;
  const value = randomBytes(8).toString('hex');
  const result = await runClientPod({
    namespace: options.namespace,
    name: `client-${randomBytes(3).toString('hex')}`,
    image: options.image,
    command: [
      'bash',
      '-c',
      clientScript(options.host, options.port ?? 11211, key, value, options.connectTimeoutSeconds),
    ],
    runAsUser: memcacheUid,
    ...(options.labels ? { labels: options.labels } : {}),
  });
  return {
    ...result,
    lines: result.logs.trim().split('\n'),
    expected: [
      'set: STORED',
      `get: VALUE ${key} 0 ${value.length}`,
      `get: ${value}`,
      'get: END',
      'miss: END',
    ],
  };
}

// An HTTP GET of /metrics over bash's /dev/tcp, keeping only memcached's own series.
function metricsScript(hosts: readonly string[], port: number): string {
  return [
    'set -eu',
    ...hosts.map((host) =>
      [
        `exec 3<>/dev/tcp/${host}/${port}`,
        `printf 'GET /metrics HTTP/1.0\\r\\nHost: ${host}\\r\\n\\r\\n' >&3`,
        `while IFS= read -r -t 10 line <&3; do case "$line" in memcached_up*|memcached_commands_total*) echo "${host} \${line%$'\\r'}";; esac; done`,
        'exec 3<&-',
      ].join('\n'),
    ),
  ].join('\n');
}

/** Each host's memcached_up and memcached_commands_total series, read from its metrics sidecar. */
export async function memcachedMetrics(options: {
  namespace: string;
  hosts: readonly string[];
  port?: number;
  image: string;
}): Promise<{ phase: string; series: Map<string, Map<string, number>> }> {
  const result = await runClientPod({
    namespace: options.namespace,
    name: `metrics-${randomBytes(3).toString('hex')}`,
    image: options.image,
    command: ['bash', '-c', metricsScript(options.hosts, options.port ?? 9150)],
    runAsUser: memcacheUid,
  });
  const series = new Map<string, Map<string, number>>();
  for (const line of result.logs.trim().split('\n')) {
    const [host, name, value] = line.split(' ');
    if (!host || !name || value === undefined) continue;
    const forHost = series.get(host) ?? new Map<string, number>();
    forHost.set(name, Number(value));
    series.set(host, forHost);
  }
  return { phase: result.phase, series };
}
