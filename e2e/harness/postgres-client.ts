// The suites' own PostgreSQL client, run where the suite runs: the write load of the operator's
// tests (every acknowledged row recorded, so lost writes are counted, never guessed) sent through a
// Service, what it saw around a fault, and a probe of one instance from inside its pod (over its
// Unix socket, so it answers even while the pod's network is cut).
import { spawn, type ChildProcess } from 'node:child_process';
import pg from 'pg';
import {
  clientConfig,
  startWriteLoad as startLoad,
  type WriteLoad,
  type WriteTarget,
} from '@homeostat/postgres-operator/test-support/write-load';
import { kubeconfigPath } from './cluster-access.ts';
import { binaryPath } from '@homeostat/testing';

export { ackedTable } from '@homeostat/postgres-operator/test-support/write-load';
export type { WriteLoad };
export type PostgresTarget = WriteTarget;
export {
  longestWritePauseSeconds,
  missingRows,
  waitForWritesAfterFault,
  writeOutageSeconds,
} from './acknowledged-writes.ts';

/** One query through `target` on a fresh connection. */
export async function queryOnce<T extends pg.QueryResultRow>(
  target: PostgresTarget,
  sql: string,
  params: unknown[] = [],
): Promise<T[]> {
  const client = new pg.Client({ ...clientConfig(target), connectionTimeoutMillis: 5000 });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return (await client.query<T>(sql, params)).rows;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * The load through a Service: a row every 10 ms, each INSERT bounded to 2 s so a statement stuck on
 * a dead primary fails and the load finds the new one.
 */
export function startWriteLoad(target: PostgresTarget, firstId = 1): WriteLoad {
  return startLoad(target, { firstId, pauseMs: 10, queryTimeoutMs: 2000 });
}

export interface RoleSample {
  instance: string;
  /** Date.now() when the answer came back. */
  at: number;
  /** true: in recovery (a replica); false: accepts writes. */
  inRecovery: boolean;
}

/**
 * Polls pg_is_in_recovery() in one instance's pod every `intervalMs`, through `kubectl exec`
 * and the pod's Unix socket (the pod's network may be cut), with the operator's credentials the
 * pod has mounted. Ends when stopped or when the pod goes away.
 */
export function pollRoleInPod(
  namespace: string,
  pod: string,
  onSample: (sample: RoleSample) => void,
  intervalMs = 200,
): { stop(): void; ended: Promise<void> } {
  const script = [
    'export PGPASSWORD="$(cat /etc/homeostat/operator/password)"',
    'user="$(cat /etc/homeostat/operator/username)"',
    'while true; do',
    '  r="$(psql -h /var/run/postgresql -U "$user" -d postgres -qAtX -c "SELECT pg_is_in_recovery()" 2>/dev/null)" && echo "role $r"',
    `  sleep ${intervalMs / 1000}`,
    'done',
  ].join('\n');
  const child: ChildProcess = spawn(
    binaryPath('kubectl'),
    [
      `--kubeconfig=${kubeconfigPath()}`,
      '-n',
      namespace,
      'exec',
      pod,
      '-c',
      'postgres',
      '--',
      'bash',
      '-c',
      script,
    ],
    { stdio: ['ignore', 'pipe', 'ignore'] },
  );
  let buffered = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    let newline: number;
    while ((newline = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, newline).trim();
      buffered = buffered.slice(newline + 1);
      if (line === 'role t' || line === 'role f')
        onSample({ instance: pod, at: Date.now(), inRecovery: line === 'role t' });
    }
  });
  const ended = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return { stop: () => child.kill('SIGKILL'), ended };
}

/**
 * Moments where two instances accepted writes: for each sample that says "writable", another
 * instance's latest sample within `windowMs` before it that also said "writable".
 */
export function overlappingWriters(samples: readonly RoleSample[], windowMs: number): string[] {
  const sorted = [...samples].sort((a, b) => a.at - b.at);
  const latest = new Map<string, RoleSample>();
  const found: string[] = [];
  for (const sample of sorted) {
    latest.set(sample.instance, sample);
    if (sample.inRecovery) continue;
    for (const other of latest.values()) {
      if (other.instance === sample.instance || other.inRecovery) continue;
      if (sample.at - other.at <= windowMs)
        found.push(`${sample.instance} and ${other.instance} at ${new Date(sample.at).toISOString()}`);
    }
  }
  return found;
}
