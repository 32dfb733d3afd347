// The tests' read-write Service: a loopback TCP proxy whose upstream the engine's Routing moves.
// Withdrawing cuts every open connection and refuses new ones, so a client can only write where
// the engine routes it.
import { startTcpProxy } from '@homeostat/testing';
import type { Routing } from '../failover/actions.ts';
import type { InstanceEndpoint } from '../instance/instance.ts';

export interface WriteRouter extends Routing {
  readonly port: number;
  /** The instance writes go to now, if any. */
  readonly upstream: string | undefined;
  close(): Promise<void>;
}

/** Starts the proxy on a free 127.0.0.1 port, routing to `initial`. */
export async function startWriteRouter(initial: InstanceEndpoint): Promise<WriteRouter> {
  const proxy = await startTcpProxy(initial.port, initial.host);
  let upstream: InstanceEndpoint | undefined = initial;
  return {
    port: proxy.port,
    get upstream() {
      return upstream?.name;
    },
    async withdrawWrites() {
      upstream = undefined;
      proxy.cut();
    },
    async routeWritesTo(primary) {
      upstream = primary;
      proxy.retarget(primary.port, primary.host);
    },
    close: () => proxy.close(),
  };
}
