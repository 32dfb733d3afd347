// One memcached client (memjs) with two ways of choosing a key's server, so that both are measured
// with the same protocol code against the same servers:
//   - modulo: memjs's own default, a string hash of the key modulo the number of servers;
//   - ketama: a consistent-hash ring (the `hashring` package, ketama-compatible: 160 points per
//     server from md5) built over the servers' stable names, so a server's share of keys stays
//     with its name, whatever its address, and a change of the set moves only the added or removed
//     server's share.
import HashRing from 'hashring';
import { Client, type Server } from 'memjs';

export type Hashing = 'modulo' | 'ketama';
export const hashings: readonly Hashing[] = ['modulo', 'ketama'];

/** A server as a client is told about it: its stable name and its address (`host:port`). */
export interface ServerEntry {
  readonly name: string;
  readonly address: string;
}

/** A memjs client over an ordered server list, and the name of the server each key goes to. */
export interface CacheClient {
  readonly client: Client;
  /** The name of the server this client sends `key` to. */
  serverOf(key: string): string;
  close(): void;
}

/** Opens a client over `servers` (in this order) that picks servers by `hashing`. */
export function openCacheClient(servers: readonly ServerEntry[], hashing: Hashing): CacheClient {
  if (servers.length === 0) throw new Error('a cache client needs at least one server');
  // One attempt per request: a refused connection is a figure to report, never hidden by a retry
  // on another server (memjs's failover is off by default; retries would only add time).
  const client = Client.create(servers.map((s) => s.address).join(','), {
    retries: 1,
    logger: { log: (...messages: unknown[]) => console.error('memjs:', ...messages) },
  });
  const nameOfAddress = new Map(servers.map((s) => [s.address, s.name]));
  if (hashing === 'ketama') {
    const byName = new Map(servers.map((s, i) => [s.name, client.servers[i]]));
    const ring = new HashRing(servers.map((s) => s.name));
    // memjs's documented hook is getServer, but its published types say it returns a string while
    // memjs indexes its server array with the result; `server(key)` is the typed selection point.
    client.server = (key: string): Server | undefined => byName.get(ring.get(key));
  }
  return {
    client,
    serverOf(key) {
      const server = client.server(key);
      const name = server && nameOfAddress.get(`${server.host}:${server.port}`);
      if (!name) throw new Error(`no server for key ${key}`);
      return name;
    },
    close: () => client.close(),
  };
}
