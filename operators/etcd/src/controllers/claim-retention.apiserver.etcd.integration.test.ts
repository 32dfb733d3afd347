// `storage.retention` with both sides real: a real kube-apiserver holds the EtcdCluster, its claims
// and pods; a stand-in for the kubelet runs a real etcd process per pod with a data directory per
// claim; a stand-in for the garbage collector deletes what the deleted EtcdCluster owned, by the
// owner references alone. Retain: the cluster deleted and created again (a GitOps replace) comes
// back as the same etcd cluster with every key. Delete: the claims go with the cluster.
import { describe, expect, it } from 'vitest';
import { consistently, waitUntil } from '@homeostat/testing';
import { builtin } from '@homeostat/reconcile';
import { etcdClusters, type EtcdCluster } from '../api/etcd-cluster-types.ts';
import type { EtcdConnection } from '../connection.ts';
import { clusterConnection, waitForVoters as waitForVotersOf } from '../test-support/cluster-clients.ts';
import { conditionOf, createEtcdCluster, eventsAbout } from '../test-support/etcd-cluster-fixtures.ts';
import { memberIdAnnotation, memberLabels } from './cluster-names.ts';
import { expectKeyspaceOnEveryMember, writeKeys } from '../test-support/keyspace.ts';
import { useOperatorTestBed } from '../test-support/operator-test-bed.ts';

const bed = useOperatorTestBed({ label: 'retain' });
const { client, namespace, addressing, poll } = bed;
const get = (name: string) => bed.cluster(name);

const connectionTo = (cluster: EtcdCluster, size: number): Promise<EtcdConnection> =>
  clusterConnection(client, addressing, cluster, size);
const clientUrls = async (cluster: EtcdCluster, size: number) =>
  (await connectionTo(cluster, size)).endpoints;
/** Every member a ready voter and nothing left to do. */
const waitForVoters = (name: string, size: number) =>
  waitForVotersOf(client, namespace, name, size, poll, { converged: true });

const claimsOf = async (name: string) =>
  (
    await client.list(builtin.persistentVolumeClaims, {
      namespace,
      labelSelector: `app.kubernetes.io/instance=${name}`,
    })
  ).items;

/** Deletes the EtcdCluster, lets the garbage collector act, and waits until its pods are gone. */
async function deleteCluster(name: string): Promise<void> {
  const uid = (await get(name)).metadata?.uid ?? '';
  await client.delete(etcdClusters, name, namespace);
  await waitUntil(`${name} gone`, async () => !(await client.find(etcdClusters, name, namespace)), poll);
  await bed.collectGarbage(uid);
  await waitUntil(
    `the pods of ${name} gone and their etcd stopped`,
    async () => {
      const pods = await client.list(builtin.pods, {
        namespace,
        labelSelector: `app.kubernetes.io/instance=${name}`,
      });
      return pods.items.length === 0 && !bed.runner.runningPods().some((p) => p.startsWith(`${name}-`));
    },
    poll,
  );
}

describe('storage.retention on a real kube-apiserver with real etcd members', () => {
  it('Retain: deleted and created again with the same name, the cluster resumes with every key', async () => {
    await createEtcdCluster(client, 'kept', namespace, {
      size: 3,
      storage: { size: '1Gi', retention: 'Retain' },
    });
    const first = await waitForVoters('kept', 3);
    const ids = first.status?.members?.map((m) => [m.name, m.id]);
    const keys = await writeKeys(await connectionTo(first, 3), 'kept/', 100);
    // Nothing owns the claims, so the garbage collector has nothing to delete them for.
    const claims = await claimsOf('kept');
    expect(claims.map((c) => c.metadata?.name).sort()).toEqual(['kept-0-data', 'kept-1-data', 'kept-2-data']);
    for (const claim of claims) expect(claim.metadata?.ownerReferences ?? []).toEqual([]);

    await deleteCluster('kept');
    expect((await claimsOf('kept')).map((c) => c.metadata?.uid).sort()).toEqual(
      claims.map((c) => c.metadata?.uid).sort(),
    );

    await createEtcdCluster(client, 'kept', namespace, {
      size: 3,
      storage: { size: '1Gi', retention: 'Retain' },
    });
    const again = await waitForVoters('kept', 3);
    expect(again.metadata?.uid).not.toBe(first.metadata?.uid);
    // The same etcd cluster and members, restarted on their data: not a new cluster beside it.
    expect(again.status?.clusterId).toBe(first.status?.clusterId);
    expect(again.status?.members?.map((m) => [m.name, m.id])).toEqual(ids);
    expect((await eventsAbout(client, namespace, 'kept', 'RetainedClaimsAdopted')).length).toBeGreaterThan(0);
    const connection = await connectionTo(again, 3);
    await expectKeyspaceOnEveryMember(connection, await clientUrls(again, 3), keys);
    // Writable: a new key reaches every member.
    const more = await writeKeys(connection, 'again/', 10);
    await expectKeyspaceOnEveryMember(connection, await clientUrls(again, 3), new Map([...keys, ...more]));

    // Switched to Delete, the claims are adopted: the cluster controls them from now on.
    await client.patch(etcdClusters, 'kept', namespace, { spec: { storage: { retention: 'Delete' } } });
    await waitUntil(
      'the claims of kept controlled by it',
      async () =>
        (await claimsOf('kept')).every((c) =>
          c.metadata?.ownerReferences?.some((o) => o.uid === again.metadata?.uid && o.controller),
        ),
      poll,
    );
  });

  it('Delete (the default): the claims are controlled by the cluster and go with it', async () => {
    await createEtcdCluster(client, 'gone', namespace, { size: 1 });
    const cluster = await waitForVoters('gone', 1);
    expect(cluster.spec.storage.retention).toBe('Delete');
    const [claim] = await claimsOf('gone');
    expect(claim?.metadata?.ownerReferences).toEqual([
      expect.objectContaining({
        kind: 'EtcdCluster',
        name: 'gone',
        uid: cluster.metadata?.uid,
        controller: true,
      }),
    ]);
    await writeKeys(await connectionTo(cluster, 1), 'gone/', 10);

    // Created again before the garbage collector has acted: the old claim and pod are not taken
    // over (their data is on its way out); the new cluster waits and says why.
    await client.delete(etcdClusters, 'gone', namespace);
    await waitUntil('gone deleted', async () => !(await client.find(etcdClusters, 'gone', namespace)), poll);
    await createEtcdCluster(client, 'gone', namespace, { size: 1 });
    await waitUntil(
      "the new gone waiting for the old one's objects",
      async () => conditionOf(await get('gone'), 'Degraded')?.reason === 'PreviousClusterObjects',
      poll,
    );
    expect(conditionOf(await get('gone'), 'Degraded')?.message).toContain('gone-0-data');
    await bed.collectGarbage(cluster.metadata?.uid ?? '');
    await waitUntil(
      'the old claim of gone deleted',
      async () => (await claimsOf('gone')).every((c) => c.metadata?.uid !== claim?.metadata?.uid),
      poll,
    );
    // Then a new, empty etcd cluster: the deleted one's keys went with its claim.
    const fresh = await waitForVoters('gone', 1);
    expect(fresh.status?.clusterId).not.toBe(cluster.status?.clusterId);
    await expectKeyspaceOnEveryMember(await connectionTo(fresh, 1), await clientUrls(fresh, 1), new Map());
  });

  it('Retain with bootstrap.fromBackup over retained claims: refused, nothing made, one Event', async () => {
    // What an EtcdCluster named restored, deleted under Retain, leaves: its members' claims,
    // labelled for the name, owned by nothing.
    const names = ['restored-0', 'restored-1', 'restored-2'];
    for (const member of names) {
      await client.create(builtin.persistentVolumeClaims, {
        metadata: {
          name: `${member}-data`,
          namespace,
          labels: memberLabels('restored', member),
          annotations: { [memberIdAnnotation]: '1234abcd' },
        },
        spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
      });
    }
    await createEtcdCluster(client, 'restored', namespace, {
      size: 3,
      storage: { size: '1Gi', retention: 'Retain' },
      bootstrap: { fromBackup: { backupName: 'before-the-incident' } },
    });
    await waitUntil(
      'restored Degraded: RetainedClaimsConflict',
      async () => conditionOf(await get('restored'), 'Degraded')?.reason === 'RetainedClaimsConflict',
      poll,
    );
    const message = conditionOf(await get('restored'), 'Degraded')?.message ?? '';
    expect(message).toContain('restored-1-data, restored-2-data');
    expect(message).toContain(
      'bootstrap.fromBackup would be ignored: delete the claims to restore the backup',
    );
    // A few more rounds' worth of time: still no member pod, and the Warning said once.
    await consistently(
      'no member pod of restored',
      async () =>
        (await client.list(builtin.pods, { namespace, labelSelector: 'app.kubernetes.io/instance=restored' }))
          .items.length === 0,
      { forMs: 3000, intervalMs: 300 },
    );
    const events = await eventsAbout(client, namespace, 'restored', 'RetainedClaimsConflict');
    expect(events.map((e) => [e.type, e.note])).toEqual([['Warning', message]]);
    // The claims are left as they were: the user decides.
    expect((await claimsOf('restored')).map((c) => c.metadata?.ownerReferences ?? [])).toEqual([[], [], []]);
  });
});
