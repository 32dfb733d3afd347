// The TLS Secrets of an EtcdCluster. Generated (the default): a CA kept in <name>-ca, and from it a
// serving certificate for clients, one for peers (server and client use) and a client certificate
// for the operator and users. Each is made when missing and issued again, in place, once less than
// a third of its life is left (members read their certificate files at every handshake, and the
// kubelet refreshes mounted Secrets, so nothing restarts); otherwise never rewritten: a certificate
// is not something to converge byte by byte. A lost CA is never replaced while certificates it
// signed remain (ADR 0309). Provided: the user's Secrets, read as they are.
import type { V1Secret } from '@kubernetes/client-node';
import { builtin, type KubeClient } from '@homeostat/reconcile';
import type { EtcdCluster } from '../api/etcd-cluster-types.ts';
import type { EtcdConnection } from '../connection.ts';
import {
  commonNameOf,
  createCertificateAuthority,
  issueCertificate,
  caValidDays,
  certificateValidDays,
  needsRenewal,
  type CertificatePem,
  type CertificateRequest,
} from '../tls/certificates.ts';
export { caValidDays, certificateValidDays, needsRenewal, renewBeforeDays } from '../tls/certificates.ts';
import { caSecretName, nameOf, namespaceOf, ownedMeta, tlsSecretNames } from './cluster-names.ts';
import type { MemberAddressing } from './member-addressing.ts';
import type { OwnedObjects } from './owned-objects.ts';

const decode = (secret: V1Secret | undefined, key: string): string | undefined => {
  const value = secret?.data?.[key];
  return value === undefined ? undefined : Buffer.from(value, 'base64').toString('utf8');
};
const encode = (text: string) => Buffer.from(text, 'utf8').toString('base64');

function tlsSecret(cluster: EtcdCluster, name: string, ca: string, pem: CertificatePem): V1Secret {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: ownedMeta(cluster, name),
    type: 'kubernetes.io/tls',
    data: { 'tls.crt': encode(pem.certificate), 'tls.key': encode(pem.privateKey), 'ca.crt': encode(ca) },
  };
}

/**
 * The certificates a generated CA issues for cluster `name`: one serving clients, one for peers
 * (server and client use), one for clients. The peer certificate's CN is the only one members
 * accept on their peer port (`--peer-cert-allowed-cn`), so the client certificate, signed by the
 * same CA, cannot speak raft.
 */
export function clusterCertificateRequests(
  name: string,
  hosts: { readonly dnsNames: readonly string[]; readonly ipAddresses: readonly string[] },
): Record<'server' | 'peer' | 'client', CertificateRequest> {
  const validDays = certificateValidDays;
  return {
    server: { commonName: `${name}-server`, usages: ['server', 'client'], validDays, ...hosts },
    peer: { commonName: `${name}-peer`, usages: ['server', 'client'], validDays, ...hosts },
    client: { commonName: `${name}-client`, usages: ['client'], validDays },
  };
}

/** What `ensureGeneratedTls` did, or why it made nothing. */
export interface GeneratedTls {
  /** Secrets made because they were missing. */
  readonly made: readonly string[];
  /** Secrets whose certificate was issued again before it expires. */
  readonly renewed: readonly string[];
  /** Set when the CA is gone while certificates it signed remain: nothing is made. */
  readonly caMissing?: string;
}

/**
 * Makes whichever generated TLS Secrets of `cluster` are missing, and issues again, in place, a
 * certificate about to expire. Does nothing when TLS is off or the Secrets are provided.
 */
export async function ensureGeneratedTls(
  cluster: EtcdCluster,
  client: KubeClient,
  owned: OwnedObjects,
  addressing: MemberAddressing,
  now = new Date(),
): Promise<GeneratedTls> {
  const names = tlsSecretNames(cluster);
  if (!names || cluster.spec.tls.provided) return { made: [], renewed: [] };
  const name = nameOf(cluster);
  const roles = ['server', 'peer', 'client'] as const;
  const made: string[] = [];
  const renewed: string[] = [];
  let caSecret = owned.secret(cluster, caSecretName(name));
  if (!caSecret) {
    // A new CA would sign certificates the running members do not trust (they hold the old CA),
    // and the old certificates would stay valid for years: refuse, and say how to go on.
    const signed = roles.map((role) => names[role]).filter((secret) => owned.secret(cluster, secret));
    if (signed.length) {
      return {
        made,
        renewed,
        caMissing:
          `Secret ${caSecretName(name)} (the CA that signed ${signed.join(', ')}) is missing; no new CA is made ` +
          `while certificates of the old one remain. Restore ${caSecretName(name)} from a backup of the ` +
          `namespace, or delete ${signed.join(', ')} too to have every certificate issued by a new CA ` +
          `(peers may fail to connect until each member's mounted Secrets are refreshed)`,
      };
    }
    const pem = await createCertificateAuthority(`${name}.${namespaceOf(cluster)} etcd CA`, caValidDays);
    caSecret = await client.create(builtin.secrets, {
      metadata: ownedMeta(cluster, caSecretName(name)),
      type: 'Opaque',
      data: { 'ca.crt': encode(pem.certificate), 'ca.key': encode(pem.privateKey) },
    });
    made.push(caSecretName(name));
  }
  const ca: CertificatePem = {
    certificate: decode(caSecret, 'ca.crt') ?? '',
    privateKey: decode(caSecret, 'ca.key') ?? '',
  };
  const requests = clusterCertificateRequests(name, addressing.certificateNames(cluster));
  for (const role of roles) {
    const secretName = names[role];
    const current = owned.secret(cluster, secretName);
    if (current && !needsRenewal(decode(current, 'tls.crt'), now)) continue;
    const pem = await issueCertificate(ca, requests[role]);
    const wanted = tlsSecret(cluster, secretName, ca.certificate, pem);
    if (!current) {
      await client.create(builtin.secrets, wanted);
      made.push(secretName);
    } else {
      // In place, at the version read: the name every pod mounts stays; a concurrent change wins.
      await client.replace(builtin.secrets, {
        ...wanted,
        metadata: { ...current.metadata, ...wanted.metadata },
      });
      renewed.push(secretName);
    }
  }
  return { made, renewed };
}

/**
 * What the operator connects to the members with: the client certificate Secret (generated ones
 * from the cache; a provided one read from the API server, since only labelled Secrets are cached).
 */
export async function clientCredentials(
  cluster: EtcdCluster,
  client: KubeClient,
  owned: OwnedObjects,
): Promise<EtcdConnection['credentials']> {
  const names = tlsSecretNames(cluster);
  if (!names) return undefined;
  const secret =
    owned.secret(cluster, names.client) ??
    (await client.find(builtin.secrets, names.client, namespaceOf(cluster)));
  const [ca, cert, key] = ['ca.crt', 'tls.crt', 'tls.key'].map((k) => decode(secret, k));
  if (!ca || !cert || !key) {
    throw new Error(
      `Secret ${names.client} must hold ca.crt, tls.crt and tls.key (a kubernetes.io/tls Secret with the CA)`,
    );
  }
  return { rootCertificate: Buffer.from(ca), certChain: Buffer.from(cert), privateKey: Buffer.from(key) };
}

/** A Secret's certificate (tls.crt) as PEM, read from the cache or, for a provided one, the API server. */
async function certificateOf(
  cluster: EtcdCluster,
  client: KubeClient,
  owned: OwnedObjects,
  secretName: string,
): Promise<string | undefined> {
  const secret =
    owned.secret(cluster, secretName) ??
    (await client.find(builtin.secrets, secretName, namespaceOf(cluster)));
  return decode(secret, 'tls.crt');
}

/**
 * The CN members accept on their peer port (`--peer-cert-allowed-cn`): the peer certificate's.
 * Every certificate of a cluster may be signed by one CA, so the CA alone would let a client
 * certificate speak raft; refused (with why) when the peer certificate has no CN or the client
 * certificate carries the same one, since peers could then not tell the two apart.
 */
export async function peerCommonName(
  cluster: EtcdCluster,
  client: KubeClient,
  owned: OwnedObjects,
): Promise<string | undefined> {
  const names = tlsSecretNames(cluster);
  if (!names) return undefined;
  const peerPem = await certificateOf(cluster, client, owned, names.peer);
  if (!peerPem) throw new Error(`Secret ${names.peer} holds no peer certificate (tls.crt)`);
  const peer = commonNameOf(peerPem);
  if (!peer) {
    throw new Error(
      `the certificate in Secret ${names.peer} has no common name (CN): members accept peers by the peer certificate's CN; issue it with one`,
    );
  }
  const clientPem = await certificateOf(cluster, client, owned, names.client);
  if (clientPem && commonNameOf(clientPem) === peer) {
    throw new Error(
      `the client certificate in Secret ${names.client} has the peer certificate's CN ${peer}: members would accept it on their peer port; issue it with another CN`,
    );
  }
  return peer;
}
