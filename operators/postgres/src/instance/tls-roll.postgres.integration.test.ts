// An operator upgrade that brings TLS to a running cluster (ADR 0214, amended 2026-11-27), with
// real PostgreSQL 15 processes: the replica rolls onto TLS first while its primary still serves
// plaintext, and must keep streaming; once the primary rolls too, it streams over TLS, verified
// (verify-full), and never again in plaintext.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '@homeostat/testing';
import { createCertificateAuthority, issueCertificate } from '@homeostat/operator-kit/tls';
import { serverCertificateRequest } from '../controllers/cluster-tls.ts';
import { repointStandby } from './control.ts';
import { parseConninfo } from './conninfo.ts';
import { defaultConnectOptions, withConnection, type InstanceEndpoint } from './instance.ts';
import { PostgresTestBed, type TestInstance } from '../test-support/postgres-processes.ts';

describe('a replica on TLS whose primary still serves plaintext (an upgrade rolling)', () => {
  const bed = new PostgresTestBed('tlsroll');
  let tls: { certificate: string; privateKey: string; ca: string };
  let primary: TestInstance;
  let replica: TestInstance;

  beforeAll(async () => {
    const authority = await createCertificateAuthority('till.shop PostgreSQL CA', 30);
    const server = await issueCertificate(authority, serverCertificateRequest('till', 'shop'));
    tls = { certificate: server.certificate, privateKey: server.privateKey, ca: authority.certificate };
    // As the earlier operator made them: no TLS anywhere.
    primary = await bed.start('till-0', { role: 'primary' });
    replica = await bed.start('till-1', { role: 'replica', primary });
    await sql(primary, 'CREATE TABLE rows (id int PRIMARY KEY)');
  }, 120_000);
  afterAll(() => bed.cleanup());

  const sql = (instance: InstanceEndpoint, text: string) =>
    withConnection(instance, bed.superuser, defaultConnectOptions, async (c) => (await c.query(text)).rows);
  const conninfo = async () =>
    parseConninfo(String((await sql(replica, 'SHOW primary_conninfo'))[0]?.['primary_conninfo'] ?? ''));
  const replicated = (id: number) =>
    waitUntil(
      `row ${id} reaches the replica`,
      async () => (await sql(replica, `SELECT 1 FROM rows WHERE id = ${id}`)).length === 1,
      { timeoutMs: 30_000, intervalMs: 100 },
    );
  /** The operator's step for a standby not streaming from its primary (the maintain action). */
  const operatorRepoints = () =>
    repointStandby(
      { endpoint: replica, credentials: bed.superuser, options: defaultConnectOptions },
      primary,
    );

  it('starts the rolled replica and streams it from the plaintext primary, as the operator says', async () => {
    await replica.stopFast();
    // The roll: the replica's new pod mounts the certificate; the primary's old pod does not.
    replica = await bed.start('till-1', { role: 'replica', primary, tls });
    expect(bed.entrypointLog('till-1')).toContainEqual(
      expect.stringContaining('the primary serves no TLS yet'),
    );
    expect(await operatorRepoints()).toBe(true);
    expect((await conninfo()).get('sslmode')).toBe('disable');
    await sql(primary, 'INSERT INTO rows VALUES (1)');
    await replicated(1);
  }, 90_000);

  it('streams over TLS, verify-full, once the primary has rolled, and never plaintext again', async () => {
    await primary.stopFast();
    primary = await bed.start('till-0', { role: 'primary', tls });
    expect(primary.ca).toBe(tls.ca);
    expect(await operatorRepoints()).toBe(true);
    const settings = await conninfo();
    expect(settings.get('sslmode')).toBe('verify-full');
    expect(settings.get('sslrootcert')).toMatch(/ca\.crt$/);
    await sql(primary, 'INSERT INTO rows VALUES (2)');
    await replicated(2);
    const senders = await sql(
      primary,
      'SELECT r.application_name, s.ssl FROM pg_stat_replication r JOIN pg_stat_ssl s USING (pid)',
    );
    expect(senders).toEqual([{ application_name: 'till-1', ssl: true }]);
    // Converged: asked again, the operator changes nothing.
    expect(await operatorRepoints()).toBe(false);
  }, 90_000);
});
