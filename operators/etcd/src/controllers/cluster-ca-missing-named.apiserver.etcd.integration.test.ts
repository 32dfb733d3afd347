// A lost CA is said even while another problem holds Degraded: the operator on a real
// kube-apiserver with real etcd members (MemberPodRunner). With the operator away, the cluster's
// client Service is replaced by one it does not control (a name someone else holds) and the CA
// Secret is deleted; the operator back, Degraded names both, and the CA's Warning is recorded once.
import { describe, expect, it } from 'vitest';
import { consistently, waitUntil } from '@homeostat/testing';
import { builtin } from '@homeostat/reconcile';
import { waitForVoters } from '../test-support/cluster-clients.ts';
import { conditionOf, createEtcdCluster, eventsAbout } from '../test-support/etcd-cluster-fixtures.ts';
import { useOperatorTestBed } from '../test-support/operator-test-bed.ts';
import { caSecretName, clientServiceName } from './cluster-names.ts';

const bed = useOperatorTestBed({ label: 'ca-named' });
const { client, namespace, poll } = bed;
const name = 'both';

describe('a lost CA beside another problem, on a real kube-apiserver with real etcd members', () => {
  it('names the lost CA in Degraded beside the name someone else holds, with one Warning', async () => {
    await createEtcdCluster(client, name, namespace, { size: 1 });
    await waitForVoters(client, namespace, name, 1, poll);

    await bed.stopOperator();
    await client.delete(builtin.services, clientServiceName(name), namespace);
    await client.create(builtin.services, {
      metadata: { name: clientServiceName(name), namespace },
      spec: { ports: [{ name: 'web', port: 80 }] },
    });
    await client.delete(builtin.secrets, caSecretName(name), namespace);
    await bed.startOperator();

    await waitUntil(
      'Degraded names the lost CA',
      async () =>
        (conditionOf(await bed.cluster(name), 'Degraded')?.message ?? '').includes(caSecretName(name)),
      poll,
    );
    const degraded = conditionOf(await bed.cluster(name), 'Degraded');
    expect(degraded?.reason).toBe('NameTaken');
    expect(degraded?.message).toContain(
      `Service ${clientServiceName(name)}: an object of this name exists and is not controlled`,
    );
    expect(degraded?.message).toMatch(
      new RegExp(`Secret ${caSecretName(name)} .* is missing; no new CA is made`),
    );
    // A few more rounds: the CA's Warning still once.
    await consistently(
      'one CertificateAuthorityMissing Event',
      async () => (await eventsAbout(client, namespace, name, 'CertificateAuthorityMissing')).length === 1,
      { forMs: 3000, intervalMs: 500 },
    );
  });
});
