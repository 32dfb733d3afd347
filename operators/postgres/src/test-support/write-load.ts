// A client that writes rows as fast as it can through the router and records every row whose
// INSERT was acknowledged, so lost writes are counted, never guessed.
import pg from 'pg';
import type { Credentials } from '../instance.ts';

export interface AckedWrite {
  readonly id: number;
  readonly at: number;
}

export interface WriteLoad {
  readonly acked: readonly AckedWrite[];
  readonly errors: number;
  /** Stops writing; resolves when the writer loop has ended. */
  stop(): Promise<void>;
}

/** The table every writer inserts into (created on the primary before the load starts). */
export const ackedTable =
  'CREATE TABLE IF NOT EXISTS acked (id bigint PRIMARY KEY, at timestamptz DEFAULT now(), pad text)';

/** Inserts rows with increasing ids through `port` until stopped; reconnects after any error. */
export function startWriteLoad(port: number, credentials: Credentials, firstId = 1, pad = ''): WriteLoad {
  const acked: AckedWrite[] = [];
  let errors = 0;
  let stopping = false;
  let client: pg.Client | undefined;
  let nextId = firstId;
  const loop = (async () => {
    while (!stopping) {
      try {
        if (!client) {
          const c = new pg.Client({
            host: '127.0.0.1',
            port,
            user: credentials.user,
            password: credentials.password,
            database: 'postgres',
            connectionTimeoutMillis: 1000,
          });
          c.on('error', () => undefined);
          client = c;
          await c.connect();
        }
        const id = nextId++; // never reused: a failed INSERT may still have committed
        await client.query('INSERT INTO acked (id, pad) VALUES ($1, $2)', [id, pad]);
        acked.push({ id, at: Date.now() });
      } catch {
        errors++;
        const c = client;
        client = undefined;
        await c?.end().catch(() => undefined);
        await new Promise((r) => setTimeout(r, 20));
      }
    }
  })();
  return {
    acked,
    get errors() {
      return errors;
    },
    async stop() {
      stopping = true;
      // A write blocked on a synchronous standby would never return: close under it.
      const c = client;
      setTimeout(() => void c?.end().catch(() => undefined), 2000).unref();
      await loop;
      await client?.end().catch(() => undefined);
    },
  };
}
