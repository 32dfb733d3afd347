// The client certificate of a cluster's backup pods (ADR 0215), in <cluster>-backup-client: issued
// by the cluster's CA with the one common name the instances' pgBackRest servers accept, made when
// a backup first needs it and issued again, in place, once a third of its life is left. Owned by
// the cluster (it goes with it). Without the CA nothing is made: the cluster controller reports a
// lost CA, and a backup waits for it.
import type { V1Secret } from '@kubernetes/client-node';
import { assertOwnedOrAbsent, builtin, type KubeClient } from '@homeostat/reconcile';
import { certificateValidDays, issueCertificate, needsRenewal } from '@homeostat/operator-kit/tls';
import type { PostgresCluster } from '../../api/postgres-cluster-types.ts';
import { tlsSecretNames } from '../cluster-names.ts';
import { secretText } from '../cluster-tls.ts';
import { backupClientCommonName } from '../desired-backup.ts';
import { ownedObjectMeta } from '../operand-labels.ts';

const encode = (text: string) => Buffer.from(text, 'utf8').toString('base64');

/** Makes or renews the backup client certificate; false while the cluster's CA is not there yet. */
export async function ensureBackupClientCertificate(
  cluster: PostgresCluster,
  client: KubeClient,
  now = new Date(),
): Promise<boolean> {
  const namespace = cluster.metadata?.namespace ?? 'default';
  const names = tlsSecretNames(cluster.metadata?.name ?? '');
  const [caSecret, current] = await Promise.all([
    client.find(builtin.secrets, names.ca, namespace),
    client.find(builtin.secrets, names.backupClient, namespace),
  ]);
  assertOwnedOrAbsent(current, cluster, 'Secret');
  const ca = { certificate: secretText(caSecret, 'ca.crt'), privateKey: secretText(caSecret, 'ca.key') };
  if (!ca.certificate || !ca.privateKey) return false;
  if (
    current &&
    !needsRenewal(secretText(current, 'tls.crt'), now) &&
    secretText(current, 'ca.crt') === ca.certificate
  ) {
    return true;
  }
  const pem = await issueCertificate(
    { certificate: ca.certificate, privateKey: ca.privateKey },
    { commonName: backupClientCommonName, usages: ['client'], validDays: certificateValidDays },
  );
  const wanted: V1Secret = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: ownedObjectMeta(cluster, names.backupClient, 'tls'),
    type: 'kubernetes.io/tls',
    data: {
      'tls.crt': encode(pem.certificate),
      'tls.key': encode(pem.privateKey),
      'ca.crt': encode(ca.certificate),
    },
  };
  if (!current) await client.create(builtin.secrets, wanted);
  else
    await client.replace(builtin.secrets, {
      ...wanted,
      metadata: { ...current.metadata, ...wanted.metadata },
    });
  return true;
}
