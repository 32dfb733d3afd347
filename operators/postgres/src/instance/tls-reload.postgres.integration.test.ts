// A renewed serving certificate takes effect without a restart (ADR 0214, amended 2026-11-27), with
// a real PostgreSQL 15 process: the files the pod mounts are replaced, as the kubelet does after the
// operator renews <cluster>-server, and new TLS connections then get the new certificate from the
// same postmaster.
import { X509Certificate } from 'node:crypto';
import { connect as tcpConnect } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '@homeostat/testing';
import {
  createCertificateAuthority,
  issueCertificate,
  type CertificatePem,
} from '@homeostat/operator-kit/tls';
import { serverCertificateRequest } from '../controllers/cluster-tls.ts';
import { defaultConnectOptions, withConnection } from './instance.ts';
import { PostgresTestBed, type TestInstance } from '../test-support/postgres-processes.ts';

/** PostgreSQL's SSLRequest: length 8, then the code 1234.5679. */
const sslRequest = Buffer.from([0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f]);

/** The certificate `instance` serves to a new TLS connection, verified against `ca`. */
function servedCertificate(instance: TestInstance, ca: string): Promise<X509Certificate> {
  return new Promise((resolve, reject) => {
    const socket = tcpConnect(instance.port, instance.host);
    socket.setTimeout(5000, () => socket.destroy(new Error('no answer to the SSLRequest')));
    socket.once('error', reject);
    socket.once('connect', () => socket.write(sslRequest));
    socket.once('data', (answer) => {
      if (answer.toString('latin1') !== 'S') {
        socket.destroy();
        reject(new Error(`the server declined TLS (${answer.toString('latin1')})`));
        return;
      }
      const secure = tlsConnect({ socket, ca, host: instance.host }, () => {
        const certificate = secure.getPeerX509Certificate();
        secure.destroy();
        if (certificate) resolve(certificate);
        else reject(new Error('no peer certificate'));
      });
      secure.once('error', reject);
    });
  });
}

describe('a renewed serving certificate, with a real PostgreSQL 15 instance', () => {
  const bed = new PostgresTestBed('tlsreload');
  let authority: CertificatePem;
  let primary: TestInstance;

  beforeAll(async () => {
    authority = await createCertificateAuthority('drawer.shop PostgreSQL CA', 30);
    const server = await issueCertificate(authority, serverCertificateRequest('drawer', 'shop'));
    const tls = { certificate: server.certificate, privateKey: server.privateKey, ca: authority.certificate };
    // Checked every second, not every ten: the test waits for it.
    primary = await bed.start('drawer-0', { role: 'primary', tls, env: { PG_TLS_CHECK_SECONDS: '1' } });
  }, 120_000);
  afterAll(() => bed.cleanup());

  const startedAt = () =>
    withConnection(primary, bed.superuser, defaultConnectOptions, async (c) => {
      const { rows } = await c.query<{ at: string }>('SELECT pg_postmaster_start_time()::text AS at');
      return rows[0]?.at;
    });

  it('serves the new certificate once the mounted files change, without restarting', async () => {
    const before = await startedAt();
    const first = await servedCertificate(primary, authority.certificate);
    const renewed = await issueCertificate(authority, serverCertificateRequest('drawer', 'shop'));
    const expected = new X509Certificate(renewed.certificate);
    expect(expected.serialNumber).not.toBe(first.serialNumber);

    bed.replaceTls('drawer-0', {
      certificate: renewed.certificate,
      privateKey: renewed.privateKey,
      ca: authority.certificate,
    });
    await waitUntil(
      'the instance serves the renewed certificate',
      async () =>
        (await servedCertificate(primary, authority.certificate)).serialNumber === expected.serialNumber,
      { timeoutMs: 20_000, intervalMs: 250 },
    );
    const served = await servedCertificate(primary, authority.certificate);
    expect(served.validTo).toBe(expected.validTo);
    expect(await startedAt()).toBe(before);
    expect(bed.entrypointLog('drawer-0')).toContainEqual(
      expect.stringContaining('tls: the certificate files changed'),
    );
  }, 60_000);
});
