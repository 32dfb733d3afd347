// The generated certificates of a running EtcdCluster: issued again before they expire, with no
// member restarted (etcd reads its certificate files at every handshake; MemberPodRunner refreshes
// a mounted Secret's files when the Secret changes, as the kubelet does), and a lost CA never
// replaced silently under members that trust it. Real kube-apiserver, real etcd members for the
// pods the operator makes, TLS on every client and peer connection.
import { X509Certificate } from 'node:crypto';
import { connect } from 'node:tls';
import { beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '@homeostat/testing';
import { builtin } from '@homeostat/reconcile';
import type { V1Secret } from '@kubernetes/client-node';
import type { EtcdConnection } from '../connection.ts';
import { clusterConnection, waitForVoters } from '../test-support/cluster-clients.ts';
import { conditionOf, createEtcdCluster, eventsAbout } from '../test-support/etcd-cluster-fixtures.ts';
import { expectKeyspaceOnEveryMember, readAll, writeKeys } from '../test-support/keyspace.ts';
import { useOperatorTestBed } from '../test-support/operator-test-bed.ts';
import { issueCertificate, notAfterOf } from '../tls/certificates.ts';
import { caSecretName } from './cluster-names.ts';
import { clusterCertificateRequests, renewBeforeDays } from './cluster-tls.ts';

const bed = useOperatorTestBed({ label: 'certificates', pollTimeoutMs: 120_000 });
const { client, namespace, addressing, poll } = bed;
const name = 'certs';
const roles = ['server', 'peer', 'client'] as const;
const secretOf = (role: (typeof roles)[number]) => `${name}-${role}-tls`;
const day = 24 * 60 * 60 * 1000;

const decode = (secret: V1Secret, key: string) =>
  Buffer.from(secret.data?.[key] ?? '', 'base64').toString('utf8');
const encode = (text: string) => Buffer.from(text, 'utf8').toString('base64');

/** The serial number of the certificate a member presents on `url` (https://host:port). */
function servedSerial(
  url: string,
  as: { ca: string; certificate: string; privateKey: string },
): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({
      host: hostname,
      port: Number(port),
      servername: 'localhost',
      ca: as.ca,
      cert: as.certificate,
      key: as.privateKey,
    });
    socket.once('secureConnect', () => {
      resolve(normal(socket.getPeerCertificate().serialNumber));
      socket.end();
    });
    socket.once('error', reject);
  });
}

/** Serial numbers as hex without leading zeros, however each API prints them. */
const normal = (serial: string) => serial.toUpperCase().replace(/^0+/, '');
const serialOf = (pem: string) => normal(new X509Certificate(pem).serialNumber);

describe('generated certificates of a running EtcdCluster, on a real kube-apiserver', () => {
  let connection: EtcdConnection;
  let written: Map<string, string>;

  const cluster = () => bed.cluster(name);
  const secret = (secretName: string) => client.get(builtin.secrets, secretName, namespace);

  beforeAll(async () => {
    await createEtcdCluster(client, name, namespace, { size: 3, tls: { enabled: true } });
    connection = await clusterConnection(
      client,
      addressing,
      await waitForVoters(client, namespace, name, 3, poll),
      3,
    );
    written = await writeKeys(connection, 'before/', 20);
  }, 300_000);

  it(
    'issues certificates about to expire again in place; members serve the new ones without a restart',
    { timeout: 300_000 },
    async () => {
      const ca = await secret(caSecretName(name));
      const caPem = { certificate: decode(ca, 'ca.crt'), privateKey: decode(ca, 'ca.key') };
      const requests = clusterCertificateRequests(name, addressing.certificateNames(await cluster()));
      // Time passes: each certificate, as the same CA issued it, has an hour left.
      for (const role of roles) {
        const expiring = await issueCertificate(caPem, { ...requests[role], validDays: 1 / 24 });
        await client.patch(builtin.secrets, secretOf(role), namespace, {
          data: { 'tls.crt': encode(expiring.certificate), 'tls.key': encode(expiring.privateKey) },
        });
      }
      /** Container restarts of the member pods, as the kubelet (here the runner) reports them. */
      const restarts = async () =>
        (await client.list(builtin.pods, { namespace })).items.map(
          (p) => `${p.metadata?.name ?? ''}:${p.status?.containerStatuses?.[0]?.restartCount ?? 0}`,
        );
      const restartsBefore = await restarts();

      const renewed: Record<string, V1Secret> = {};
      await waitUntil(
        'every certificate issued again with years to live',
        async () => {
          for (const role of roles) {
            const current = await secret(secretOf(role));
            if (notAfterOf(decode(current, 'tls.crt')).getTime() - Date.now() < renewBeforeDays * day)
              return false;
            renewed[role] = current;
          }
          return true;
        },
        poll,
      );
      // The Event is written once the Secrets are: wait for it rather than read it at once.
      await waitUntil(
        'the CertificatesRenewed Event',
        async () => (await eventsAbout(client, namespace, name, 'CertificatesRenewed')).length > 0,
        poll,
      );

      // The members serve the renewed certificates, on their client and their peer ports.
      const peer = renewed['peer'] as V1Secret;
      const asPeer = {
        ca: caPem.certificate,
        certificate: decode(peer, 'tls.crt'),
        privateKey: decode(peer, 'tls.key'),
      };
      const serverSerial = serialOf(decode(renewed['server'] as V1Secret, 'tls.crt'));
      const peerSerial = serialOf(decode(peer, 'tls.crt'));
      const current = await cluster();
      await waitUntil(
        'every member serving the renewed certificates',
        async () => {
          for (let i = 0; i < 3; i++) {
            const urls = await addressing.urls(current, `${name}-${i}`);
            if ((await servedSerial(urls.clientUrl, asPeer).catch(() => '')) !== serverSerial) return false;
            if ((await servedSerial(urls.peerUrl, asPeer).catch(() => '')) !== peerSerial) return false;
          }
          return true;
        },
        poll,
      );
      expect(await restarts()).toEqual(restartsBefore);

      // A client with the renewed client certificate writes and reads; nothing was lost.
      const client2 = renewed['client'] as V1Secret;
      const renewedConnection: EtcdConnection = {
        ...connection,
        credentials: {
          rootCertificate: Buffer.from(decode(client2, 'ca.crt')),
          certChain: Buffer.from(decode(client2, 'tls.crt')),
          privateKey: Buffer.from(decode(client2, 'tls.key')),
        },
      };
      for (const [key, value] of await writeKeys(renewedConnection, 'after/', 10)) written.set(key, value);
      await expectKeyspaceOnEveryMember(renewedConnection, connection.endpoints, written);
      const status = await waitForVoters(client, namespace, name, 3, poll);
      expect(conditionOf(status, 'Degraded')?.status).toBe('False');
    },
  );

  it(
    'makes no new CA when the CA Secret is deleted under running members: Degraded says how to go on',
    { timeout: 300_000 },
    async () => {
      const ca = await secret(caSecretName(name));
      await client.delete(builtin.secrets, caSecretName(name), namespace);
      await waitUntil(
        'Degraded: CertificateAuthorityMissing',
        async () => conditionOf(await cluster(), 'Degraded')?.reason === 'CertificateAuthorityMissing',
        poll,
      );
      expect(conditionOf(await cluster(), 'Degraded')?.message).toMatch(
        new RegExp(`Secret ${caSecretName(name)} .* is missing; no new CA is made`),
      );
      expect(await client.find(builtin.secrets, caSecretName(name), namespace)).toBeUndefined();
      expect(await eventsAbout(client, namespace, name, 'CertificateAuthorityMissing')).toHaveLength(1);
      // The members go on with the certificates they hold.
      expect((await readAll(connection, connection.endpoints[0] ?? '')).size).toBeGreaterThan(0);

      // The CA restored from a backup of the namespace: healthy again, nothing reissued.
      await client.create(builtin.secrets, {
        metadata: {
          name: caSecretName(name),
          namespace,
          ...(ca.metadata?.labels ? { labels: ca.metadata.labels } : {}),
          ...(ca.metadata?.ownerReferences ? { ownerReferences: ca.metadata.ownerReferences } : {}),
        },
        type: ca.type ?? 'Opaque',
        data: ca.data ?? {},
      });
      await waitUntil(
        'Degraded False again',
        async () => conditionOf(await cluster(), 'Degraded')?.status === 'False',
        poll,
      );
    },
  );
});
