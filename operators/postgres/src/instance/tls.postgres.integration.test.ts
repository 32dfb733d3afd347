// TLS as the entrypoint sets it up, with real PostgreSQL 15 processes and the certificate the
// operator would issue (ADR 0214): over TCP only TLS is accepted, a client verifying the server
// against the cluster's CA (verify-full) gets in, one that trusts another CA does not, and a
// replica streams from its primary over TLS.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCertificateAuthority, issueCertificate } from '@homeostat/operator-kit/tls';
import { serverCertificateRequest } from '../controllers/cluster-tls.ts';
import { defaultConnectOptions, withConnection } from './instance.ts';
import { PostgresTestBed, type TestInstance } from '../test-support/postgres-processes.ts';

describe('TLS on every TCP connection, with real PostgreSQL 15 instances', () => {
  const bed = new PostgresTestBed('tls');
  let primary: TestInstance;
  let replica: TestInstance;
  let ca: string;

  beforeAll(async () => {
    const authority = await createCertificateAuthority('ledger.shop PostgreSQL CA', 30);
    const server = await issueCertificate(authority, serverCertificateRequest('ledger', 'shop'));
    ca = authority.certificate;
    const tls = { certificate: server.certificate, privateKey: server.privateKey, ca };
    primary = await bed.start('ledger-0', { role: 'primary', tls });
    replica = await bed.start('ledger-1', { role: 'replica', primary, tls });
  }, 120_000);
  afterAll(() => bed.cleanup());

  const plaintext = async (instance: TestInstance) => {
    const client = new pg.Client({
      host: instance.host,
      port: instance.port,
      user: bed.superuser.user,
      password: bed.superuser.password,
      database: 'postgres',
      ssl: false,
      connectionTimeoutMillis: 2000,
    });
    client.on('error', () => undefined);
    try {
      await client.connect();
      return 'connected';
    } catch (error) {
      return error instanceof Error ? error.message : String(error);
    } finally {
      await client.end().catch(() => undefined);
    }
  };

  it('refuses a plaintext TCP connection, on the primary and on the replica', async () => {
    for (const instance of [primary, replica]) {
      expect(await plaintext(instance)).toMatch(/no pg_hba\.conf entry .* no encryption/);
    }
  });

  it('lets in a client that verifies the server against the CA (verify-full), over TLS 1.3', async () => {
    const seen = await withConnection(primary, bed.superuser, defaultConnectOptions, async (c) => {
      const { rows } = await c.query<{ ssl: boolean; version: string }>(
        'SELECT ssl, version FROM pg_stat_ssl WHERE pid = pg_backend_pid()',
      );
      return rows[0];
    });
    expect(seen).toEqual({ ssl: true, version: 'TLSv1.3' });
  });

  it('refuses the server to a client that trusts another CA, and to one that dials a name not on the certificate', async () => {
    const other = await createCertificateAuthority('someone else', 30);
    await expect(
      withConnection({ ...primary, ca: other.certificate }, bed.superuser, defaultConnectOptions, (c) =>
        c.query('SELECT 1'),
      ),
    ).rejects.toThrow(/self[- ]signed|unable to (get|verify)/i);
    const wrongName = new pg.Client({
      host: primary.host,
      port: primary.port,
      ...bed.superuser,
      database: 'postgres',
      ssl: { ca, servername: 'ledger-rw.other.svc' },
      connectionTimeoutMillis: 2000,
    });
    wrongName.on('error', () => undefined);
    await expect(wrongName.connect()).rejects.toThrow(
      /ledger-rw\.other\.svc.* is not in the cert's altnames/,
    );
    await wrongName.end().catch(() => undefined);
  });

  it('streams the replica from the primary over TLS, verify-full against the CA', async () => {
    const senders = await withConnection(primary, bed.superuser, defaultConnectOptions, async (c) => {
      const { rows } = await c.query<{ application_name: string; ssl: boolean }>(
        `SELECT r.application_name, s.ssl FROM pg_stat_replication r JOIN pg_stat_ssl s USING (pid)`,
      );
      return rows;
    });
    expect(senders).toEqual([{ application_name: 'ledger-1', ssl: true }]);
    const conninfo = await withConnection(replica, bed.superuser, defaultConnectOptions, async (c) => {
      const { rows } = await c.query<{ conninfo: string }>(
        "SELECT current_setting('primary_conninfo') AS conninfo",
      );
      return rows[0]?.conninfo ?? '';
    });
    expect(conninfo).toContain('sslmode=verify-full');
    expect(conninfo).toMatch(/sslrootcert=\S+ca\.crt/);
    // The key never leaves its file: not in the configuration PostgreSQL reads.
    const config = readFileSync(join(primary.dataDir, 'homeostat.conf'), 'utf8');
    expect(config).toMatch(/^ssl = on$/m);
    expect(config).toMatch(/^ssl_min_protocol_version = 'TLSv1\.3'$/m);
  });
});
