// The tests' read-write Service: a loopback TCP proxy whose upstream the engine's Routing moves.
// Withdrawing cuts every open connection, so a client can only write where the engine routes it.
import { connect, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Routing } from '../actions.ts';
import type { InstanceEndpoint } from '../instance.ts';

export interface WriteRouter extends Routing {
  readonly port: number;
  /** The instance writes go to now, if any. */
  readonly upstream: string | undefined;
  close(): Promise<void>;
}

/** Starts the proxy on a free 127.0.0.1 port, routing to `initial`. */
export async function startWriteRouter(initial: InstanceEndpoint): Promise<WriteRouter> {
  let upstream: InstanceEndpoint | undefined = initial;
  const pairs = new Set<[Socket, Socket]>();
  const server: Server = createServer((client) => {
    if (!upstream) {
      client.resetAndDestroy();
      return;
    }
    const target = connect(upstream.port, upstream.host);
    const pair: [Socket, Socket] = [client, target];
    pairs.add(pair);
    client.pipe(target);
    target.pipe(client);
    const end = () => {
      pairs.delete(pair);
      client.destroy();
      target.destroy();
    };
    client.on('close', end).on('error', end);
    target.on('close', end).on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const cutAll = () => {
    for (const [client, target] of pairs) {
      client.resetAndDestroy();
      target.destroy();
    }
    pairs.clear();
  };
  return {
    port: (server.address() as AddressInfo).port,
    get upstream() {
      return upstream?.name;
    },
    async withdrawWrites() {
      upstream = undefined;
      cutAll();
    },
    async routeWritesTo(primary) {
      upstream = primary;
      cutAll();
    },
    async close() {
      cutAll();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
