import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';

/**
 * A loopback proxy in front of one etcd member's peer URL that tells rafthttp's two kinds of
 * traffic apart by the first request line, to play a peer whose streams are back while the
 * pipeline sends of its peers still go to a dead address (a pod that came back under a new IP).
 *
 * rafthttp opens long-lived streams with `GET /raft/stream/<type>/<from>`; those connections are
 * never reused for another request. Everything else (pipeline `POST /raft`, the prober's
 * `GET /raft/probing`, `GET /version`) shares one keep-alive pool, so any such connection may later
 * carry a pipeline send: in `hold` mode only stream requests are forwarded and the rest is held.
 */
export interface RaftPeerProxy {
  /** The URL to advertise as the member's peer URL. */
  readonly url: string;
  /** Forwards streams only; holds every other request open, unanswered, until failHeld(). */
  holdAllButStreams(): void;
  /** Resets the held connections (their sends fail now) and resets every later non-stream request. */
  failHeld(): void;
  /** Non-stream requests held open right now, by request line. */
  held(): string[];
  /** Stream requests forwarded so far (request lines). */
  readonly streamsForwarded: number;
  close(): Promise<void>;
}

type Mode = 'forward' | 'hold' | 'reject';

const streamRequest = /^GET \/raft\/stream\//;

/** Starts a proxy on a free 127.0.0.1 port that forwards to `targetPort` (the member's real peer port). */
export async function startRaftPeerProxy(targetPort: number): Promise<RaftPeerProxy> {
  let mode: Mode = 'forward';
  let streamsForwarded = 0;
  const held = new Map<Socket, string>();
  // Forwarded non-stream connections: reset when holding starts, so no pooled one carries a send through.
  const pooled = new Set<Socket>();
  const open = new Set<Socket>();

  const forward = (client: Socket, head: Buffer, isStream: boolean) => {
    const upstream = connect(targetPort, '127.0.0.1');
    open.add(upstream);
    if (!isStream) pooled.add(client);
    const end = () => {
      pooled.delete(client);
      client.destroy();
      upstream.destroy();
    };
    upstream.on('close', () => {
      open.delete(upstream);
      end();
    });
    upstream.on('error', end);
    client.on('close', end).on('error', end);
    upstream.write(head);
    client.pipe(upstream);
    upstream.pipe(client);
  };

  const server: Server = createServer((client) => {
    open.add(client);
    client.on('close', () => {
      open.delete(client);
      held.delete(client);
    });
    client.on('error', () => client.destroy());
    let head = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const lineEnd = head.indexOf('\r\n');
      if (lineEnd < 0 && head.length < 8192) return;
      client.off('data', onData);
      client.pause();
      const requestLine = head.subarray(0, lineEnd < 0 ? 80 : lineEnd).toString('latin1');
      const isStream = streamRequest.test(requestLine);
      if (isStream) streamsForwarded++;
      if (isStream || mode === 'forward') {
        forward(client, head, isStream);
        client.resume();
      } else if (mode === 'hold') {
        // Read and drop the rest, never answer: the sender waits, as on a route to an address gone.
        held.set(client, requestLine);
        client.on('data', () => undefined);
        client.resume();
      } else {
        client.resetAndDestroy();
      }
    };
    client.on('data', onData);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  return {
    url: `http://127.0.0.1:${port}`,
    get streamsForwarded() {
      return streamsForwarded;
    },
    holdAllButStreams() {
      mode = 'hold';
      for (const socket of pooled) socket.resetAndDestroy();
      pooled.clear();
    },
    failHeld() {
      mode = 'reject';
      for (const socket of held.keys()) socket.resetAndDestroy();
      held.clear();
    },
    held: () => [...held.values()],
    async close() {
      for (const socket of open) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
