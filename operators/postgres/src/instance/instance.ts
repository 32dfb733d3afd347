import { Socket } from 'node:net';
import pg from 'pg';

/** Where an instance listens, as the engine and the other instances reach it. */
export interface InstanceEndpoint {
  /** The instance's name: its pod name, its application_name, its replication slot's suffix. */
  readonly name: string;
  readonly host: string;
  readonly port: number;
  /**
   * The CA (PEM) the instance's serving certificate chains to. Set: the connection is TLS and the
   * certificate must name `host` (libpq's verify-full); unset: plaintext, for an instance started
   * without TLS (a pod made before the operator issued certificates).
   */
  readonly ca?: string;
}

/** The superuser the engine observes and controls the instances with. */
export interface Credentials {
  readonly user: string;
  readonly password: string;
  readonly database?: string;
}

/** Timeouts for every connection the engine opens. */
export interface ConnectOptions {
  readonly connectTimeoutMs: number;
  readonly statementTimeoutMs: number;
}

export const defaultConnectOptions: ConnectOptions = { connectTimeoutMs: 2000, statementTimeoutMs: 10_000 };

// How long past the statement timeout the client waits for an answer, and for a goodbye, from a
// server that has gone silent (a frozen process, a node cut off) before it drops the socket.
const silentServerGraceMs = 1000;

/**
 * Opens one connection, runs `work`, always closes it. Bounded even when the server goes silent
 * mid-query (statement_timeout is the server's own and a frozen server never applies it): each
 * query fails after the statement timeout plus a grace, and closing drops the socket when the
 * server never acknowledges the goodbye, so no reconcile waits forever on an instance.
 */
export async function withConnection<T>(
  endpoint: InstanceEndpoint,
  credentials: Credentials,
  options: ConnectOptions,
  work: (client: pg.Client) => Promise<T>,
): Promise<T> {
  const socket = new Socket();
  const client = new pg.Client({
    stream: () => socket,
    query_timeout: options.statementTimeoutMs + silentServerGraceMs,
    host: endpoint.host,
    port: endpoint.port,
    user: credentials.user,
    password: credentials.password,
    database: credentials.database ?? 'postgres',
    connectionTimeoutMillis: options.connectTimeoutMs,
    statement_timeout: options.statementTimeoutMs,
    application_name: 'homeostat-failover-engine',
    // Node's TLS checks the chain against `ca` alone and the name against `host` (pg passes it on).
    ...(endpoint.ca ? { ssl: { ca: endpoint.ca, rejectUnauthorized: true } } : {}),
  });
  // A server that dies under an open connection emits 'error' on the client; the failed query
  // already reports it, so this only keeps the process from crashing on an unhandled event.
  client.on('error', () => undefined);
  try {
    await client.connect();
    return await work(client);
  } finally {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      client.end().catch(() => undefined),
      new Promise<void>((resolve) => (timer = setTimeout(resolve, silentServerGraceMs))),
    ]);
    clearTimeout(timer);
    socket.destroy();
  }
}

/** The message of an unknown thrown value, for reasons shown to people. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message || error.name : String(error);
}
