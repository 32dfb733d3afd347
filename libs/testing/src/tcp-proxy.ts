import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

/** A loopback TCP proxy a test can break on purpose, to play a real network failure. */
export interface TcpProxy {
  /** The port clients connect to instead of the target's. */
  readonly port: number;
  /** Resets every open connection; new ones are refused until resume(). */
  cut(): void;
  /** Keeps connections open but forwards nothing (a black hole); resume() lets data flow again. */
  stall(): void;
  /** Keeps connections open and holds every byte back until resume() delivers them (a route that stops, then recovers). */
  hold(): void;
  /** Black-holes the connections open now, for good; new connections forward normally. */
  blackholeOpenConnections(): void;
  /** Back to normal forwarding. */
  resume(): void;
  /** Forwards new connections to another target and resets the open ones (a Service moving its endpoint). */
  retarget(port: number, host?: string): void;
  /** Connections opened so far. */
  readonly connections: number;
  close(): Promise<void>;
}

/** Starts a proxy on a free 127.0.0.1 port that forwards to `targetPort` on `targetHost`. */
export async function startTcpProxy(targetPort: number, targetHost = '127.0.0.1'): Promise<TcpProxy> {
  let target = { port: targetPort, host: targetHost };
  let mode: 'forward' | 'cut' | 'stall' | 'hold' = 'forward';
  // Bytes held back while in 'hold', in the order they came, with the socket each is for.
  const held: [Socket, Buffer][] = [];
  let connections = 0;
  const pairs = new Set<[Socket, Socket]>();
  const blackholed = new WeakSet<Socket>();
  const server: Server = createServer((client) => {
    if (mode === 'cut') {
      client.resetAndDestroy();
      return;
    }
    connections++;
    const upstream = connect(target.port, target.host);
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    const forward = (from: Socket, to: Socket) =>
      from.on('data', (chunk: Buffer) => {
        // While stalled, bytes are swallowed, as a dead route would.
        if (blackholed.has(from)) return;
        if (mode === 'forward') to.write(chunk);
        else if (mode === 'hold') held.push([to, chunk]);
      });
    forward(client, upstream);
    forward(upstream, client);
    const end = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const resetOpen = () => {
    for (const [client, upstream] of pairs) {
      client.resetAndDestroy();
      upstream.destroy();
    }
    pairs.clear();
  };
  return {
    port: (server.address() as AddressInfo).port,
    get connections() {
      return connections;
    },
    cut() {
      mode = 'cut';
      resetOpen();
    },
    retarget(port, host = '127.0.0.1') {
      target = { port, host };
      mode = 'forward';
      resetOpen();
    },
    stall() {
      mode = 'stall';
    },
    hold() {
      mode = 'hold';
    },
    blackholeOpenConnections() {
      for (const [client, upstream] of pairs) {
        blackholed.add(client);
        blackholed.add(upstream);
      }
    },
    resume() {
      mode = 'forward';
      for (const [to, chunk] of held.splice(0)) if (!to.destroyed) to.write(chunk);
    },
    async close() {
      for (const [client, upstream] of pairs) {
        client.destroy();
        upstream.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
