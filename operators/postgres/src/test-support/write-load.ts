// A client that writes rows through one address until stopped and records every row whose INSERT
// was acknowledged (and when each write failed), so lost writes are counted, never guessed. The
// engine's tests, bench:failover and the e2e suites all measure with this one load.
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import type { Credentials } from '../instance/instance.ts';

/** Where the load connects: a router, a Service, a port-forward. */
export interface WriteTarget {
  readonly host: string;
  readonly port: number;
  readonly user: string;
  readonly password: string;
  readonly database: string;
  /** The cluster's CA (PEM): set, the load connects over TLS and verifies the server (verify-full). */
  readonly ca?: string;
  /** The name the server's certificate must carry, when `host` is an address it does not (a ClusterIP). */
  readonly servername?: string;
}

/** node-postgres's settings for `target`: over TLS, verified, when it has a CA. */
export function clientConfig(target: WriteTarget): pg.ClientConfig {
  const { ca, servername, ...address } = target;
  return {
    ...address,
    ...(ca ? { ssl: { ca, rejectUnauthorized: true, ...(servername ? { servername } : {}) } } : {}),
  };
}

export interface AckedWrite {
  readonly id: number;
  /** Date.now() when the INSERT was acknowledged. */
  readonly at: number;
}

export interface WriteLoadOptions {
  /** The first id written (default 1); ids only grow, a failed INSERT's id is never reused. */
  readonly firstId?: number;
  /** Written into the `pad` column of every row, to make rows (and WAL) bigger. */
  readonly pad?: string;
  /** Pause after each acknowledged write, in ms (default 0: as fast as the server answers). */
  readonly pauseMs?: number;
  /**
   * Client-side limit of each INSERT, in ms (default none). A load through a Service sets it so a
   * statement stuck on a dead primary fails and the load finds the new one; tests of synchronous
   * replication leave it off, since there a blocked write is what they look at.
   */
  readonly queryTimeoutMs?: number;
}

export interface WriteLoad {
  readonly acked: readonly AckedWrite[];
  /** Date.now() of each failed INSERT or connection. */
  readonly failures: readonly number[];
  /** How many writes or connections failed. */
  readonly errors: number;
  /** Stops writing; resolves when the writer loop has ended. */
  stop(): Promise<void>;
}

/** The table every load inserts into (created through the target before the load starts). */
export const ackedTable =
  'CREATE TABLE IF NOT EXISTS acked (id bigint PRIMARY KEY, at timestamptz DEFAULT now(), pad text)';

/** A target on this host's loopback, e.g. the engine tests' router; `ca` when its instances serve TLS. */
export function loopbackTarget(port: number, credentials: Credentials, ca?: string): WriteTarget {
  return {
    host: '127.0.0.1',
    port,
    user: credentials.user,
    password: credentials.password,
    database: credentials.database ?? 'postgres',
    ...(ca ? { ca } : {}),
  };
}

// A write blocked on a synchronous standby, or on a primary that went silent, would never return:
// stop() closes the connection under it after this long.
const closeBlockedWriteAfterMs = 2000;
const reconnectPauseMs = 20;

/** Inserts rows with increasing ids through `target` until stopped, one at a time; reconnects after any error. */
export function startWriteLoad(target: WriteTarget, options: WriteLoadOptions = {}): WriteLoad {
  const acked: AckedWrite[] = [];
  const failures: number[] = [];
  const { pad, pauseMs = 0, queryTimeoutMs } = options;
  const insert =
    pad === undefined ? 'INSERT INTO acked (id) VALUES ($1)' : 'INSERT INTO acked (id, pad) VALUES ($1, $2)';
  let stopping = false;
  let client: pg.Client | undefined;
  let nextId = options.firstId ?? 1;
  const loop = (async () => {
    while (!stopping) {
      try {
        if (!client) {
          const c = new pg.Client({
            ...clientConfig(target),
            connectionTimeoutMillis: 1000,
            keepAlive: true,
            ...(queryTimeoutMs === undefined ? {} : { query_timeout: queryTimeoutMs }),
          });
          c.on('error', () => undefined);
          client = c;
          await c.connect();
        }
        const id = nextId++;
        await client.query(insert, pad === undefined ? [id] : [id, pad]);
        acked.push({ id, at: Date.now() });
        if (pauseMs) await sleep(pauseMs);
      } catch {
        failures.push(Date.now());
        const c = client;
        client = undefined;
        void c?.end().catch(() => undefined);
        await sleep(reconnectPauseMs);
      }
    }
  })();
  return {
    acked,
    failures,
    get errors() {
      return failures.length;
    },
    async stop() {
      stopping = true;
      const c = client;
      setTimeout(() => void c?.end().catch(() => undefined), closeBlockedWriteAfterMs).unref();
      await loop;
      await client?.end().catch(() => undefined);
    },
  };
}
