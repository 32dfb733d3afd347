// Certificates checked with Node's own X.509 parser, and used for a real TLS handshake with
// client authentication: what etcd and the etcd3 client will do with them.
import { X509Certificate } from 'node:crypto';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { connect, createServer } from 'node:tls';
import { describe, expect, it } from 'vitest';
import { createCertificateAuthority, issueCertificate } from './certificates.ts';

describe('cluster certificate authority', () => {
  it('makes a CA and certificates it signs, with the names and usages asked for', async () => {
    const ca = await createCertificateAuthority('orders etcd CA', 3650);
    const caCert = new X509Certificate(ca.certificate);
    expect(caCert.ca).toBe(true);
    expect(caCert.subject).toBe('CN=orders etcd CA');

    const server = await issueCertificate(ca, {
      commonName: 'orders-server',
      dnsNames: ['*.orders-peers.shop.svc', 'orders.shop.svc', 'localhost'],
      ipAddresses: ['127.0.0.1'],
      usages: ['server', 'client'],
      validDays: 365,
    });
    const cert = new X509Certificate(server.certificate);
    expect(cert.verify(caCert.publicKey)).toBe(true);
    expect(cert.checkIssued(caCert)).toBe(true);
    expect(cert.ca).toBe(false);
    // checkHost answers with the name in the certificate that matched.
    expect(cert.checkHost('orders-1.orders-peers.shop.svc')).toBe('*.orders-peers.shop.svc');
    expect(cert.checkHost('orders.shop.svc')).toBe('orders.shop.svc');
    expect(cert.checkHost('other.shop.svc')).toBeUndefined();
    expect(cert.checkIP('127.0.0.1')).toBe('127.0.0.1');
    expect(cert.keyUsage).toEqual(expect.arrayContaining(['1.3.6.1.5.5.7.3.1', '1.3.6.1.5.5.7.3.2']));
    const days = (Date.parse(cert.validTo) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(364);
    expect(days).toBeLessThan(366);
    expect(server.privateKey).toMatch(/^-----BEGIN PRIVATE KEY-----/);
  });

  it('makes certificates a TLS server and a client authenticate each other with', async () => {
    const ca = await createCertificateAuthority('test CA', 1);
    const serverPem = await issueCertificate(ca, {
      commonName: 'server',
      ipAddresses: ['127.0.0.1'],
      usages: ['server'],
      validDays: 1,
    });
    const clientPem = await issueCertificate(ca, {
      commonName: 'operator',
      usages: ['client'],
      validDays: 1,
    });
    const server = createServer(
      {
        cert: serverPem.certificate,
        key: serverPem.privateKey,
        ca: ca.certificate,
        requestCert: true,
        rejectUnauthorized: true,
      },
      (socket) => socket.end(`hello ${socket.getPeerCertificate().subject.CN}`),
    );
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const { port } = server.address() as AddressInfo;
      const socket = connect({
        host: '127.0.0.1',
        port,
        ca: ca.certificate,
        cert: clientPem.certificate,
        key: clientPem.privateKey,
      });
      let reply = '';
      socket.setEncoding('utf8').on('data', (chunk: string) => (reply += chunk));
      await once(socket, 'end');
      expect(reply).toBe('hello operator');
    } finally {
      server.close();
    }
  });
});
