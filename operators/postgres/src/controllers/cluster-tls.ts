// The TLS Secrets of a PostgreSQLCluster (ADR 0214): a CA of its own in <name>-ca, and from it one
// serving certificate every instance presents, in <name>-server. Each is made when missing and the
// serving certificate is issued again, in place, once less than a third of its life is left
// (PostgreSQL reads its certificate files again on a reload, the entrypoint copies them at each
// start); otherwise never rewritten. A lost CA is never replaced while a certificate it signed
// remains: clients that trust the old CA would refuse every instance. Minting is the shared
// library's (@homeostat/operator-kit/tls), as for etcd.
import type { V1Secret } from '@kubernetes/client-node';
import { assertOwnedOrAbsent, builtin, type KubeClient } from '@homeostat/reconcile';
import {
  createCertificateAuthority,
  issueCertificate,
  caValidDays,
  certificateValidDays,
  needsRenewal,
  type CertificatePem,
  type CertificateRequest,
} from '@homeostat/operator-kit/tls';
export {
  caValidDays,
  certificateValidDays,
  needsRenewal,
  renewBeforeDays,
} from '@homeostat/operator-kit/tls';
import type { PostgresCluster } from '../api/postgres-cluster-types.ts';
import { serviceNames, tlsSecretNames } from './cluster-names.ts';
import { ownedObjectMeta } from './operand-labels.ts';

/**
 * The names the serving certificate holds. The Services (`-rw`, `-ro`, `-r`) and every instance
 * behind the headless Service, each in every form a client may write inside the cluster: short,
 * `.<ns>`, `.<ns>.svc`, `.<ns>.svc.cluster.local`. Instances by wildcard, so scaling issues
 * nothing. `localhost` and 127.0.0.1: a client in the pod itself (`kubectl exec ... psql -h
 * localhost`), and the test kubelet, which runs every instance on loopback.
 */
export function serverCertificateHosts(
  cluster: string,
  namespace: string,
): { readonly dnsNames: readonly string[]; readonly ipAddresses: readonly string[] } {
  const services = serviceNames(cluster);
  const forms = (name: string) => [
    name,
    `${name}.${namespace}`,
    `${name}.${namespace}.svc`,
    `${name}.${namespace}.svc.cluster.local`,
  ];
  return {
    dnsNames: [
      ...[services.readWrite, services.readOnly, services.any].flatMap(forms),
      ...forms(services.instances).map((name) => `*.${name}`),
      'localhost',
    ],
    ipAddresses: ['127.0.0.1'],
  };
}

/** The serving certificate every instance of `cluster` presents. */
export function serverCertificateRequest(cluster: string, namespace: string): CertificateRequest {
  return {
    commonName: `${serviceNames(cluster).readWrite}.${namespace}.svc`,
    usages: ['server'],
    validDays: certificateValidDays,
    ...serverCertificateHosts(cluster, namespace),
  };
}

/** A key of a Secret's data, decoded; undefined when absent. */
export function secretText(secret: V1Secret | undefined, key: string): string | undefined {
  const value = secret?.data?.[key];
  return value === undefined ? undefined : Buffer.from(value, 'base64').toString('utf8');
}
const encode = (text: string) => Buffer.from(text, 'utf8').toString('base64');

/** What `ensureClusterTls` did, or why it made nothing. */
export interface ClusterTls {
  readonly made: readonly string[];
  readonly renewed: readonly string[];
  /** The CA certificate (PEM), when there is one. */
  readonly ca?: string;
  /** Set when the CA is gone while the certificate it signed remains: nothing is made. */
  readonly caMissing?: string;
}

/**
 * Makes the CA and serving certificate Secrets of `cluster` when missing, and issues the serving
 * certificate again, in place, when it is about to expire. `secrets` is the label-selected cache.
 */
export async function ensureClusterTls(
  cluster: PostgresCluster,
  client: KubeClient,
  secrets: ReadonlyMap<string, V1Secret>,
  now = new Date(),
): Promise<ClusterTls> {
  const name = cluster.metadata?.name ?? '';
  const namespace = cluster.metadata?.namespace ?? 'default';
  const names = tlsSecretNames(name);
  const find = async (secretName: string) =>
    secrets.get(secretName) ?? (await client.find(builtin.secrets, secretName, namespace));
  const made: string[] = [];
  const renewed: string[] = [];
  let caSecret = await find(names.ca);
  const current = await find(names.server);
  assertOwnedOrAbsent(caSecret, cluster, 'Secret');
  assertOwnedOrAbsent(current, cluster, 'Secret');
  if (!caSecret) {
    if (current) {
      return {
        made,
        renewed,
        caMissing:
          `Secret ${names.ca} (the CA that signed ${names.server}) is missing; no new CA is made while ` +
          `its certificate remains, since clients trust the old CA. Restore ${names.ca} from a backup of ` +
          `the namespace, or delete ${names.server} too to have a new CA issue it (clients must then ` +
          `trust the new ca.crt)`,
      };
    }
    const pem = await createCertificateAuthority(`${name}.${namespace} PostgreSQL CA`, caValidDays);
    caSecret = await client.create(builtin.secrets, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: ownedObjectMeta(cluster, names.ca, 'tls'),
      type: 'Opaque',
      data: { 'ca.crt': encode(pem.certificate), 'ca.key': encode(pem.privateKey) },
    });
    made.push(names.ca);
  }
  const ca: CertificatePem = {
    certificate: secretText(caSecret, 'ca.crt') ?? '',
    privateKey: secretText(caSecret, 'ca.key') ?? '',
  };
  if (current && !needsRenewal(secretText(current, 'tls.crt'), now))
    return { made, renewed, ca: ca.certificate };
  const pem = await issueCertificate(ca, serverCertificateRequest(name, namespace));
  const wanted: V1Secret = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: ownedObjectMeta(cluster, names.server, 'tls'),
    type: 'kubernetes.io/tls',
    data: {
      'tls.crt': encode(pem.certificate),
      'tls.key': encode(pem.privateKey),
      'ca.crt': encode(ca.certificate),
    },
  };
  if (!current) {
    await client.create(builtin.secrets, wanted);
    made.push(names.server);
  } else {
    // In place, at the version read: the name every pod mounts stays; a concurrent change wins.
    await client.replace(builtin.secrets, {
      ...wanted,
      metadata: { ...current.metadata, ...wanted.metadata },
    });
    renewed.push(names.server);
  }
  return { made, renewed, ca: ca.certificate };
}
