// The SQL the engine changes instances with. Each function does one step over one connection and
// throws an Error that names the instance and the step.
import type pg from 'pg';
import { formatConninfo, parseConninfo } from './conninfo.ts';
import { parseLsn, type Lsn } from './lsn.ts';
import { scramVerifier } from './scram-verifier.ts';
import { slotName } from './slots.ts';
import { withUpstreamTls } from './upstream-tls.ts';
import {
  withConnection,
  errorMessage,
  type ConnectOptions,
  type Credentials,
  type InstanceEndpoint,
} from './instance.ts';

/** Everything a control step needs to reach an instance. */
export interface ControlTarget {
  readonly endpoint: InstanceEndpoint;
  readonly credentials: Credentials;
  readonly options: ConnectOptions;
}

async function step<T>(
  target: ControlTarget,
  what: string,
  work: (client: pg.Client) => Promise<T>,
): Promise<T> {
  try {
    return await withConnection(target.endpoint, target.credentials, target.options, work);
  } catch (error) {
    throw new Error(`${target.endpoint.name}: ${what} failed: ${errorMessage(error)}`, { cause: error });
  }
}

export { slotName } from './slots.ts';

/** ALTER SYSTEM SET/RESET for several parameters, then one reload. */
export async function alterSystem(
  target: ControlTarget,
  settings: Readonly<Record<string, string | null>>,
): Promise<void> {
  await step(target, `ALTER SYSTEM (${Object.keys(settings).join(', ')})`, async (client) => {
    for (const [name, value] of Object.entries(settings)) {
      if (!/^[a-z_]+$/.test(name)) throw new Error(`invalid parameter name '${name}'`);
      // ALTER SYSTEM takes no bind parameters; quote the literal the way PostgreSQL does.
      await client.query(
        value === null
          ? `ALTER SYSTEM RESET ${name}`
          : `ALTER SYSTEM SET ${name} = ${client.escapeLiteral(value)}`,
      );
    }
    await client.query('SELECT pg_reload_conf()');
  });
}

/** Whether a new session is read-only, and where its default_transaction_read_only comes from. */
export interface ReadOnlyCheck {
  readonly readOnly: boolean;
  /** pg_settings.source: 'configuration file', 'user' (ALTER ROLE), 'database', 'database user'… */
  readonly source: string;
}

/** `SHOW transaction_read_only` in a new session, with the source of the default it took. */
export async function checkReadOnly(target: ControlTarget): Promise<ReadOnlyCheck> {
  return step(target, 'SHOW transaction_read_only', async (client) => {
    const shown = await client.query<{ transaction_read_only: string }>('SHOW transaction_read_only');
    const source = await client.query<{ source: string }>(
      "SELECT source FROM pg_settings WHERE name = 'default_transaction_read_only'",
    );
    return {
      readOnly: shown.rows[0]?.transaction_read_only === 'on',
      source: source.rows[0]?.source ?? 'unknown',
    };
  });
}

/** Promotes a standby and waits until it accepts writes. */
export async function promote(target: ControlTarget, waitSeconds: number): Promise<void> {
  await step(target, 'pg_promote', async (client) => {
    const result = await client.query<{ promoted: boolean }>('SELECT pg_promote(true, $1) AS promoted', [
      waitSeconds,
    ]);
    if (result.rows[0]?.promoted !== true) throw new Error(`not promoted within ${waitSeconds}s`);
  });
}

/** Drops the given replication slots; one dropped meanwhile is no error, one in use is. */
export async function dropSlots(target: ControlTarget, slots: readonly string[]): Promise<void> {
  await step(target, `dropping replication slots ${slots.join(', ')}`, async (client) => {
    for (const slot of slots) {
      await client.query(
        'SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1',
        [slot],
      );
    }
  });
}

/** Creates the physical slots the given instances stream through, when missing. */
export async function ensureSlots(target: ControlTarget, instances: readonly string[]): Promise<void> {
  await step(target, 'creating replication slots', async (client) => {
    for (const instance of instances) {
      await client.query(
        `SELECT pg_create_physical_replication_slot($1, true)
          WHERE NOT EXISTS (SELECT 1 FROM pg_replication_slots WHERE slot_name = $1)`,
        [slotName(instance)],
      );
    }
  });
}

/**
 * Points a running standby at another upstream with ALTER SYSTEM + reload (no restart), with the
 * TLS that upstream serves (see upstream-tls.ts); keeps the rest of primary_conninfo (user,
 * passfile, application_name, sslrootcert). Returns false when it already was.
 */
export async function repointStandby(target: ControlTarget, upstream: InstanceEndpoint): Promise<boolean> {
  const current = await step(target, 'reading primary_conninfo', async (client) => {
    const result = await client.query<{ conninfo: string; slot: string }>(
      "SELECT current_setting('primary_conninfo') AS conninfo, current_setting('primary_slot_name') AS slot",
    );
    return result.rows[0] ?? { conninfo: '', slot: '' };
  });
  // The operator speaks TLS to an instance exactly when its pod mounts the certificate (then the
  // endpoint carries the CA), and so does the standby it points there.
  const before = parseConninfo(current.conninfo);
  const conninfo = withUpstreamTls(before, upstream.ca ? 'tls' : 'plaintext');
  conninfo.set('host', upstream.host);
  conninfo.set('port', String(upstream.port));
  if (!conninfo.has('application_name')) conninfo.set('application_name', target.endpoint.name);
  const slot = slotName(target.endpoint.name);
  if (formatConninfo(conninfo) === formatConninfo(before) && current.slot === slot) return false;
  await alterSystem(target, { primary_conninfo: formatConninfo(conninfo), primary_slot_name: slot });
  return true;
}

/**
 * Stops a primary from taking new writes before a switchover: new transactions are read-only,
 * current client sessions are ended. Returns the WAL position after which nothing was acknowledged.
 */
export async function quiesceWrites(target: ControlTarget): Promise<Lsn> {
  await alterSystem(target, { default_transaction_read_only: 'on' });
  return step(target, 'ending client sessions', async (client) => {
    await client.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
        WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()`,
    );
    const result = await client.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn');
    const lsn = result.rows[0]?.lsn;
    if (lsn === undefined) throw new Error('no row from pg_current_wal_lsn()');
    return parseLsn(lsn);
  });
}

/**
 * Makes `role` a superuser that logs in with `password`, or, with `undefined`, one that cannot log
 * in. Returns false when it already was (a password is set only when login is granted, so a
 * Secret created again after access was off carries the password the role gets).
 */
export async function setSuperuserAccess(
  target: ControlTarget,
  role: string,
  password: string | undefined,
): Promise<boolean> {
  return step(target, `superuser access of ${role}`, async (client) => {
    const result = await client.query<{ login: boolean }>(
      'SELECT rolcanlogin AS login FROM pg_roles WHERE rolname = $1',
      [role],
    );
    const exists = result.rows.length > 0;
    const login = result.rows[0]?.login ?? false;
    const identifier = client.escapeIdentifier(role);
    if (password === undefined) {
      if (!login) return false;
      await client.query(`ALTER ROLE ${identifier} NOLOGIN`);
      return true;
    }
    if (login) return false;
    // The verifier, not the password: the statement may be logged (log_statement) or recorded.
    await client.query(
      `${exists ? 'ALTER' : 'CREATE'} ROLE ${identifier} WITH SUPERUSER LOGIN PASSWORD ${client.escapeLiteral(scramVerifier(password))}`,
    );
    return true;
  });
}
