// Faults put on a standby's replication, for the tests that choose a new primary.
import { createServer, type AddressInfo, type Server } from 'node:net';
import { waitUntil } from '@homeostat/testing';
import { observeInstance } from '../instance/observe.ts';
import { defaultConnectOptions } from '../instance/instance.ts';
import { parseConninfo, formatConninfo } from '../instance/conninfo.ts';
import type { TestCluster } from './test-cluster.ts';

// A port held until `closeDeadEnds` by a listener that hangs up at once: a standby pointed at it
// can never stream. (A merely free port can be taken later by another server of the run, such as
// the write router in front of the primary, and the "paused" standby would quietly catch up.)
const deadEnds: Server[] = [];
async function deadEndPort(): Promise<number> {
  const server = createServer((socket) => socket.destroy());
  deadEnds.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address: AddressInfo | string | null = server.address();
  if (address === null || typeof address === 'string') throw new Error('dead-end listener has no port');
  return address.port;
}

/** Closes the dead-end listeners (call in afterAll). */
export async function closeDeadEnds(): Promise<void> {
  await Promise.all(deadEnds.splice(0).map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
}

/** Stops a standby's WAL receiver by pointing it at a dead end (the rest of its conninfo kept). */
export async function pauseWalReceiver(cluster: TestCluster, name: string): Promise<void> {
  const [row] = await cluster.sql<{ primary_conninfo: string }>(name, 'SHOW primary_conninfo');
  const conninfo = parseConninfo(row?.primary_conninfo ?? '');
  conninfo.set('port', String(await deadEndPort()));
  await cluster.sql(
    name,
    `ALTER SYSTEM SET primary_conninfo = '${formatConninfo(conninfo).replaceAll("'", "''")}'`,
  );
  await cluster.sql(name, 'SELECT pg_reload_conf()');
  await waitUntil(
    `${name}'s WAL receiver stopped`,
    async () => {
      const s = await observeInstance(cluster.instance(name), cluster.bed.superuser, defaultConnectOptions);
      return s.reachable && s.role === 'replica' && s.walReceiver?.status !== 'streaming';
    },
    { timeoutMs: 20_000 },
  );
}
