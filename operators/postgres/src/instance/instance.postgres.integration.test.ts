// withConnection against a real PostgreSQL process that goes silent: the engine's probes and
// actions must end (with an error) instead of holding a reconcile forever.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresTestBed, type TestInstance } from '../test-support/postgres-processes.ts';
import { withConnection } from './instance.ts';

describe('withConnection against a real PostgreSQL 15 process that freezes', () => {
  const bed = new PostgresTestBed('silent');
  let instance: TestInstance;
  const options = { connectTimeoutMs: 500, statementTimeoutMs: 500 };

  beforeAll(async () => {
    instance = await bed.start('pg-0', { role: 'primary' });
  });
  afterAll(() => bed.cleanup());

  it('fails a query the frozen server never answers, and closes without its goodbye', async () => {
    const stuck = withConnection(instance, bed.superuser, options, async (client) => {
      await client.query('SELECT 1');
      instance.freeze(); // connected, then silent: statement_timeout cannot fire in a stopped server
      return client.query('SELECT 2');
    });
    await expect(stuck).rejects.toThrow(/timeout/i);
    instance.thaw();
  });

  it('fails to connect to a frozen server, then works again once it is thawed', async () => {
    instance.freeze();
    try {
      await expect(
        withConnection(instance, bed.superuser, options, (client) => client.query('SELECT 1')),
      ).rejects.toThrow(/timeout/i);
    } finally {
      instance.thaw();
    }
    const answer = await withConnection(instance, bed.superuser, options, (client) =>
      client.query<{ one: number }>('SELECT 1 AS one'),
    );
    expect(answer.rows[0]?.one).toBe(1);
  });
});
