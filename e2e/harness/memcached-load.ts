// A memcached client that keeps working while the cache changes under it: a client pod (the
// memcached image, which has bash) opens a new connection through a host name for each set and get,
// as an application with a short-lived connection pool would, and counts every round that did not
// come back right (no connection, no reply, a wrong reply). It runs until told to stop.
import { randomBytes } from 'node:crypto';
import { waitUntil } from '@homeostat/testing';
import { kubectl } from './cluster-access.ts';
import { memcacheUid } from './memcached-client.ts';
import { runClientPod } from './workloads.ts';

// Stops on SIGUSR1. A read the signal interrupts is the end of the run, not an error: `stop` is
// looked at after every step that can wait.
function loadScript(host: string, port: number): string {
  return [
    'set -u',
    "stop=0; trap 'stop=1' USR1; trap '' PIPE",
    'ops=0; errors=0; n=0',
    'echo started',
    'while [ "$stop" = 0 ]; do',
    '  n=$((n+1)); key="load-$n"; value="v$n-$RANDOM"',
    `  if { exec 3<>/dev/tcp/${host}/${port}; } 2>/dev/null; then`,
    '    printf \'set %s 0 0 %d\\r\\n%s\\r\\nget %s\\r\\n\' "$key" "${#value}" "$value" "$key" >&3 2>/dev/null',
    '    got=""',
    '    for i in 1 2 3 4; do IFS= read -r -t 5 line <&3 || line="(no reply)"; got="$got|${line%$\'\\r\'}"; done',
    '    exec 3<&-',
    '    [ "$stop" = 1 ] && break',
    '    if [ "$got" = "|STORED|VALUE $key 0 ${#value}|$value|END" ]; then ops=$((ops+1));',
    '    else errors=$((errors+1)); echo "error $n: $got"; fi',
    '  else',
    '    [ "$stop" = 1 ] && break',
    '    errors=$((errors+1)); echo "error $n: no connection"',
    '  fi',
    '  sleep 0.05',
    'done',
    'echo "ops=$ops errors=$errors"',
  ].join('\n');
}

export interface LoadResult {
  phase: string;
  /** Rounds (one set and one get, on a new connection) that came back right. */
  ops: number;
  /** What each failed round got, one line each. */
  errors: string[];
}

export interface RunningLoad {
  /** Stops the client and returns what it counted. */
  stop(): Promise<LoadResult>;
}

/** Starts the client against `host:port` in `namespace`; resolves once it is running. */
export async function startMemcachedLoad(options: {
  namespace: string;
  host: string;
  port?: number;
  image: string;
}): Promise<RunningLoad> {
  const name = `load-${randomBytes(3).toString('hex')}`;
  const finished = runClientPod({
    namespace: options.namespace,
    name,
    image: options.image,
    command: ['bash', '-c', loadScript(options.host, options.port ?? 11211)],
    runAsUser: memcacheUid,
    timeoutSeconds: 900,
  });
  // Keep a failure of the pod for stop(), without an unhandled rejection meanwhile.
  finished.catch(() => undefined);
  await waitUntil(
    `load client ${name} running`,
    async () =>
      (await kubectl(['-n', options.namespace, 'logs', name]).catch(() => '')).startsWith('started'),
    { timeoutMs: 120_000, intervalMs: 1000 },
  );
  return {
    async stop() {
      await kubectl(['-n', options.namespace, 'exec', name, '--', 'bash', '-c', 'kill -USR1 1']);
      const { phase, logs } = await finished;
      const lines = logs.trim().split('\n');
      const summary = /^ops=(\d+) errors=(\d+)$/.exec(lines.at(-1) ?? '');
      if (!summary) throw new Error(`load client ${name} ended without its summary (${phase}): ${logs}`);
      return { phase, ops: Number(summary[1]), errors: lines.filter((l) => l.startsWith('error ')) };
    },
  };
}
