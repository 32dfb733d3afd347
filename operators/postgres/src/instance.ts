import pg from 'pg';

/** Where an instance listens, as the engine and the other instances reach it. */
export interface InstanceEndpoint {
  /** The instance's name: its pod name, its application_name, its replication slot's suffix. */
  readonly name: string;
  readonly host: string;
  readonly port: number;
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

/** Opens one connection, runs `work`, always closes it. */
export async function withConnection<T>(
  endpoint: InstanceEndpoint,
  credentials: Credentials,
  options: ConnectOptions,
  work: (client: pg.Client) => Promise<T>,
): Promise<T> {
  const client = new pg.Client({
    host: endpoint.host,
    port: endpoint.port,
    user: credentials.user,
    password: credentials.password,
    database: credentials.database ?? 'postgres',
    connectionTimeoutMillis: options.connectTimeoutMs,
    statement_timeout: options.statementTimeoutMs,
    application_name: 'homeostat-failover-engine',
  });
  // A server that dies under an open connection emits 'error' on the client; the failed query
  // already reports it, so this only keeps the process from crashing on an unhandled event.
  client.on('error', () => undefined);
  try {
    await client.connect();
    return await work(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** The message of an unknown thrown value, for reasons shown to people. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message || error.name : String(error);
}
