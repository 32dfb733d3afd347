// The serving certificate's names, checked as a TLS client checks them (Node's X.509 host and IP
// matching), and when it is issued again.
import { X509Certificate } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createCertificateAuthority, issueCertificate } from '@homeostat/operator-kit/tls';
import { appSecret } from './desired-secrets.ts';
import {
  certificateValidDays,
  needsRenewal,
  renewBeforeDays,
  serverCertificateHosts,
  serverCertificateRequest,
} from './cluster-tls.ts';
import { storedCluster } from '../test-support/cluster-fixtures.ts';

const day = 24 * 60 * 60 * 1000;

describe('the serving certificate of a PostgreSQLCluster', () => {
  it('names every Service in every form a client writes, each instance by wildcard, and loopback', () => {
    const { dnsNames, ipAddresses } = serverCertificateHosts('orders', 'shop');
    for (const service of ['orders-rw', 'orders-ro', 'orders-r']) {
      expect(dnsNames).toEqual(
        expect.arrayContaining([
          service,
          `${service}.shop`,
          `${service}.shop.svc`,
          `${service}.shop.svc.cluster.local`,
        ]),
      );
    }
    expect(dnsNames).toEqual(
      expect.arrayContaining([
        '*.orders-instances',
        '*.orders-instances.shop',
        '*.orders-instances.shop.svc',
        '*.orders-instances.shop.svc.cluster.local',
        'localhost',
      ]),
    );
    expect(dnsNames).toHaveLength(17);
    expect(ipAddresses).toEqual(['127.0.0.1']);
  });

  it('is accepted for those names and refused for any other, as a verify-full client checks', async () => {
    const ca = await createCertificateAuthority('orders.shop PostgreSQL CA', 30);
    const pem = await issueCertificate(ca, serverCertificateRequest('orders', 'shop'));
    const certificate = new X509Certificate(pem.certificate);
    expect(certificate.verify(new X509Certificate(ca.certificate).publicKey)).toBe(true);
    for (const host of [
      'orders-rw.shop.svc',
      'orders-ro.shop.svc.cluster.local',
      'orders-r',
      'orders-2.orders-instances.shop.svc', // the operator's own address of an instance
      'orders-17.orders-instances.shop.svc.cluster.local', // an instance added later
      'localhost',
    ])
      expect(certificate.checkHost(host), host).toBeDefined(); // the name it matched
    expect(certificate.checkIP('127.0.0.1')).toBe('127.0.0.1');
    for (const host of ['orders-rw.other.svc', 'billing-rw.shop.svc', 'a.b.orders-instances.shop.svc'])
      expect(certificate.checkHost(host), host).toBeUndefined();
    expect(certificate.checkIP('10.0.0.1')).toBeUndefined();
  });

  it('is issued again once less than a third of its life is left, or when unreadable', async () => {
    const ca = await createCertificateAuthority('ca', 3650);
    const pem = await issueCertificate(ca, serverCertificateRequest('orders', 'shop'));
    const notAfter = new X509Certificate(pem.certificate).validToDate.getTime();
    expect(certificateValidDays).toBe(1825);
    expect(needsRenewal(pem.certificate, new Date())).toBe(false);
    expect(needsRenewal(pem.certificate, new Date(notAfter - (renewBeforeDays + 1) * day))).toBe(false);
    expect(needsRenewal(pem.certificate, new Date(notAfter - (renewBeforeDays - 1) * day))).toBe(true);
    expect(needsRenewal(undefined, new Date())).toBe(true);
    expect(needsRenewal('not a certificate', new Date())).toBe(true);
  });

  it('makes the application Secret ask for verify-full and carry the CA, keeping every other key', () => {
    const cluster = storedCluster('orders', 'shop', {
      bootstrap: { database: 'orders', owner: 'shop_owner' },
    });
    const data = appSecret(cluster, 'pw-123', 'CA PEM').stringData;
    expect(data).toEqual({
      username: 'shop_owner',
      password: 'pw-123',
      host: 'orders-rw.shop.svc',
      port: '5432',
      dbname: 'orders',
      uri: 'postgresql://shop_owner:pw-123@orders-rw.shop.svc:5432/orders?sslmode=verify-full',
      pgpass: 'orders-rw.shop.svc:5432:orders:shop_owner:pw-123\n',
      'ca.crt': 'CA PEM',
    });
  });
});
