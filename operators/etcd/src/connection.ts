import { Etcd3, type IOptions } from 'etcd3';
import { noop } from 'cockatiel';

/** How the engine reaches etcd: client endpoints plus optional TLS and auth, and a per-call deadline. */
export interface EtcdConnection {
  /** Client URLs (http:// or https://) of one or more members. */
  readonly endpoints: readonly string[];
  readonly credentials?: IOptions['credentials'];
  readonly auth?: IOptions['auth'];
  /** Deadline of every unary call, in ms (default 5000). etcd3 ignores dialTimeout, so this is the bound. */
  readonly callTimeoutMs?: number;
}

/** How a client's HTTP/2 connection is set up, for calls that move a lot of data. */
export interface ClientTuning {
  /**
   * HTTP/2 flow-control window (per stream and per connection), in bytes. grpc-js keeps HTTP/2's
   * 64 KiB default and, unlike grpc-go, never grows it, so a stream larger than that waits for a
   * WINDOW_UPDATE round trip every 32 KiB; a few MiB lets a snapshot stream at the link's speed.
   */
  readonly flowControlWindowBytes?: number;
}

/**
 * An etcd3 client that never retries by itself. etcd3's default policy resends a call that timed out
 * up to three times and opens a circuit breaker per host; for a memberAdd that may already have been
 * applied, a blind resend can add a second member. The engine decides about retries, after reading
 * the member list again.
 */
export function openClient(
  connection: EtcdConnection,
  endpoints = connection.endpoints,
  tuning: ClientTuning = {},
): Etcd3 {
  const timeout = connection.callTimeoutMs ?? 5000;
  return new Etcd3({
    hosts: [...endpoints],
    ...(tuning.flowControlWindowBytes
      ? { grpcOptions: { 'grpc-node.flow_control_window': tuning.flowControlWindowBytes } }
      : {}),
    ...(connection.credentials ? { credentials: connection.credentials } : {}),
    ...(connection.auth ? { auth: connection.auth } : {}),
    faultHandling: { global: noop, host: () => noop },
    // Streams (snapshots) run as long as they need; every other call gets a deadline.
    defaultCallOptions: (context) => (context.isStream ? {} : { deadline: Date.now() + timeout }),
  });
}

/** A client bound to exactly one member, for calls whose answer is per member (status, defragment, snapshot). */
export function openMemberClient(
  connection: EtcdConnection,
  clientUrl: string,
  tuning: ClientTuning = {},
): Etcd3 {
  return openClient(connection, [clientUrl], tuning);
}

/** Runs `use` with a single-member client and always closes it. */
export async function withMemberClient<T>(
  connection: EtcdConnection,
  clientUrl: string,
  use: (client: Etcd3) => Promise<T>,
): Promise<T> {
  const client = openMemberClient(connection, clientUrl);
  try {
    return await use(client);
  } finally {
    client.close();
  }
}
