// No password in any PostgreSQL log, whatever logging the user turns on: real PostgreSQL 15
// processes started through the entrypoint log every statement (log_statement = all, durations,
// connections, replication commands), and every role the operator creates or alters is set the way
// the operator sets it (the entrypoint's bootstrap, setSuperuserAccess); then every log line the
// instances wrote is searched for every password.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '@homeostat/testing';
import { PostgresTestBed, type TestInstance } from '../test-support/postgres-processes.ts';
import { defaultConnectOptions, withConnection } from './instance.ts';
import { setSuperuserAccess } from './control.ts';

const loudLogging = [
  "log_statement = 'all'",
  'log_min_duration_statement = 0',
  "log_min_error_statement = 'debug5'",
  'log_connections = on',
  'log_replication_commands = on',
  // A value of any length is logged in full with a statement that fails.
  'log_parameter_max_length_on_error = -1',
].join('\n');

const secret = (what: string) => `${what}-${randomBytes(12).toString('base64url')}`;

describe('no password reaches a PostgreSQL log, with every statement logged', () => {
  const bed = new PostgresTestBed('secrecy');
  const app = { username: 'shop_owner', password: secret('app'), database: 'shop' };
  const published = [secret('published-1'), secret('published-2')];
  let primary: TestInstance;

  beforeAll(async () => {
    primary = await bed.start('pg-0', { role: 'primary', app, parameters: loudLogging });
    await bed.start('pg-1', { role: 'replica', primary, parameters: loudLogging });
  });
  afterAll(() => bed.cleanup());

  it('bootstraps the application role with a password it logs in with', async () => {
    const who = await withConnection(
      primary,
      { user: app.username, password: app.password, database: app.database },
      defaultConnectOptions,
      async (c) => (await c.query<{ u: string }>('SELECT current_user AS u')).rows[0]?.u,
    );
    expect(who).toBe(app.username);
  });

  it('grants superuser access with a password that logs in, sent as a SCRAM verifier', async () => {
    const target = { endpoint: primary, credentials: bed.superuser, options: defaultConnectOptions };
    const login = (password: string) =>
      withConnection(primary, { user: 'published_su', password }, defaultConnectOptions, (c) =>
        c.query('SELECT 1'),
      );
    for (const password of published) {
      expect(await setSuperuserAccess(target, 'published_su', password)).toBe(true);
      await login(password);
      expect(await setSuperuserAccess(target, 'published_su', undefined)).toBe(true);
    }
    const stored = await withConnection(primary, bed.superuser, defaultConnectOptions, (c) =>
      c.query<{ p: string }>("SELECT rolpassword AS p FROM pg_authid WHERE rolname = 'published_su'"),
    );
    expect(stored.rows[0]?.p).toMatch(/^SCRAM-SHA-256\$4096:/);
  });

  it('keeps the passwords of a bootstrap that fails out of the log, and says why it failed', async () => {
    // The application role named like the superuser: CREATE ROLE fails in the bootstrap SQL.
    const clash = { username: bed.superuser.user, password: secret('clash'), database: 'clash' };
    const proc = await bed.runEntrypoint('pg-clash', {
      role: 'primary',
      app: clash,
      parameters: loudLogging,
    });
    const code = await proc.exited;
    expect(code).not.toBe(0);
    const log = readFileSync(join(bed.root, 'pg-clash.log'), 'utf8');
    expect(log).toContain(`role "${bed.superuser.user}" already exists`);
    expect(log).not.toContain(clash.password);
    const termination = bed.terminationLog('pg-clash');
    const cause = /^bootstrap SQL \(roles, grants, database\) failed: .*role "postgres" already exists/;
    expect(existsSync(termination) ? readFileSync(termination, 'utf8') : '').toMatch(cause);
    // The next start bootstraps again and gives the same cause, not "holds an incomplete cluster".
    const again = await bed.runEntrypoint('pg-clash', {
      role: 'primary',
      app: clash,
      parameters: loudLogging,
    });
    expect(await again.exited).not.toBe(0);
    expect(readFileSync(termination, 'utf8')).toMatch(cause);
    published.push(clash.password);
  });

  it('leaves no password in any log, though every statement was logged', async () => {
    await waitUntil(
      'the replica streams (its connection and replication commands are logged)',
      () => Promise.resolve(bed.allLogs().includes('START_REPLICATION')),
      { timeoutMs: 20_000 },
    );
    const logs = bed.allLogs();
    // The logging was on: the statements that set passwords are there, without them.
    expect(logs).toMatch(
      /LOG: {2}statement: CREATE ROLE "published_su" WITH SUPERUSER LOGIN PASSWORD 'SCRAM-SHA-256\$/,
    );
    const replication = readFileSync(join(bed.root, 'secrets', 'replication', 'password'), 'utf8');
    for (const password of [bed.superuser.password, replication, app.password, ...published]) {
      expect(logs).not.toContain(password);
    }
  });
});
