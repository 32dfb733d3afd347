import { Etcd3, type IOptions } from 'etcd3';
import { noop } from 'cockatiel';

/** How the engine reaches etcd: client endpoints plus optional TLS and auth, and a per-call deadline. */
export interface EtcdConnection {
  /** Client URLs (http:// or https://) of one or more members. */
  readonly endpoints: readonly string[];
  readonly credentials?: IOptions['credentials'];
  readonly auth?: IOptions['auth'];
  /** gRPC channel options, e.g. the TLS name to verify when dialling an address the certificate does not name. */
  readonly grpcOptions?: IOptions['grpcOptions'];
  /** Deadline of every unary call, in ms (default 5000). etcd3 ignores dialTimeout, so this is the bound. */
  readonly callTimeoutMs?: number;
}

/**
 * An etcd3 client that never retries by itself. etcd3's default policy resends a call that timed out
 * up to three times and opens a circuit breaker per host; for a memberAdd that may already have been
 * applied, a blind resend can add a second member. The engine decides about retries, after reading
 * the member list again.
 */
export function openClient(connection: EtcdConnection, endpoints = connection.endpoints): Etcd3 {
  const timeout = connection.callTimeoutMs ?? 5000;
  return new Etcd3({
    hosts: [...endpoints],
    ...(connection.credentials ? { credentials: connection.credentials } : {}),
    ...(connection.auth ? { auth: connection.auth } : {}),
    ...(connection.grpcOptions ? { grpcOptions: connection.grpcOptions } : {}),
    faultHandling: { global: noop, host: () => noop },
    // Streams (watches) run as long as they need; every other call gets a deadline.
    defaultCallOptions: (context) => (context.isStream ? {} : { deadline: Date.now() + timeout }),
  });
}

/** A client bound to exactly one member, for calls whose answer is per member (status, defragment, snapshot). */
export function openMemberClient(connection: EtcdConnection, clientUrl: string): Etcd3 {
  return openClient(connection, [clientUrl]);
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
