// Going back from an etcd upgrade, with both sides real: a real kube-apiserver holds the EtcdCluster
// and its pods; the stand-in kubelet runs a real etcd of the release each pod's image names, and a
// broken image crash-loops. An upgrade that stopped half-way (a member crash-looping on the new
// version) rolls back member by member, the broken one first, every key kept. Going back after
// etcd's cluster version moved is refused by the controller when a stale status let it through.
import { describe, expect, it } from 'vitest';
import { consistently, waitUntil } from '@homeostat/testing';
import { builtin } from '@homeostat/reconcile';
import { etcdClusters, type EtcdCluster } from '../api/etcd-cluster-types.ts';
import { imageOf, minorOf, supportedVersions } from '../api/etcd-versions.ts';
import type { EtcdConnection } from '../connection.ts';
import { readClusterHealth } from '../health/cluster-health.ts';
import { clusterConnection, waitForVoters as waitForVotersOf } from '../test-support/cluster-clients.ts';
import { conditionOf, createEtcdCluster, eventsAbout } from '../test-support/etcd-cluster-fixtures.ts';
import { expectKeyspaceOnEveryMember, writeKeys } from '../test-support/keyspace.ts';
import { useOperatorTestBed } from '../test-support/operator-test-bed.ts';
import { podImage } from './desired-member-pod.ts';

const bed = useOperatorTestBed({ label: 'rollback', pollTimeoutMs: 120_000 });
const { client, namespace, addressing, poll } = bed;
const get = (name: string) => bed.cluster(name);
const [from, to] = supportedVersions;
if (!from || !to) throw new Error('two supported versions are needed');
const clusterVersionOf = (version: string) => `${minorOf(version)}.0`;

const connectionTo = (cluster: EtcdCluster, size: number): Promise<EtcdConnection> =>
  clusterConnection(client, addressing, cluster, size);
const waitForVoters = (name: string, size: number) =>
  waitForVotersOf(client, namespace, name, size, poll, { converged: true });

const podsOf = async (name: string) =>
  (await client.list(builtin.pods, { namespace, labelSelector: `app.kubernetes.io/instance=${name}` })).items;
const setVersion = (name: string, version: string) =>
  client.patch(etcdClusters, name, namespace, { spec: { version } });

describe('going back from an etcd upgrade, on a real kube-apiserver with real etcd members', () => {
  it('refuses to go back once the cluster version moved, though a stale status let it through: nothing touched', async () => {
    await createEtcdCluster(client, 'moved', namespace, { size: 1, version: from });
    let cluster = await waitForVoters('moved', 1);
    expect(cluster.status?.clusterVersion).toBe(clusterVersionOf(from));
    const keys = await writeKeys(await connectionTo(cluster, 1), 'moved/', 20);
    await setVersion('moved', to);
    await waitUntil(
      `moved on ${to} with cluster version ${clusterVersionOf(to)}`,
      async () => {
        const status = (await get('moved')).status;
        return (
          status?.phase === 'Running' &&
          status.members?.every((m) => m.ready && m.version === to) === true &&
          status.clusterVersion === clusterVersionOf(to)
        );
      },
      poll,
    );

    // A status written before the cluster version moved, as the API server would still hold it
    // between the move and the operator's next look (forged here with the operator away).
    await bed.stopOperator();
    await client.patchStatus(etcdClusters, 'moved', namespace, { clusterVersion: clusterVersionOf(from) });
    await setVersion('moved', from);
    await bed.startOperator();

    await waitUntil(
      'moved Degraded: DowngradeRefused',
      async () => conditionOf(await get('moved'), 'Degraded')?.reason === 'DowngradeRefused',
      poll,
    );
    cluster = await get('moved');
    expect(conditionOf(cluster, 'Degraded')?.message).toBe(
      `etcd ${minorOf(to)} cannot go back to ${minorOf(from)} once the cluster version is ${minorOf(to)} (etcd reports ${clusterVersionOf(to)}): every member has run it and the older version refuses its data. The members stay on ${to}; set spec.version to ${to} again, or restore a backup into a new cluster running ${from}`,
    );
    expect(cluster.status?.phase).toBe('Degraded');
    expect(conditionOf(cluster, 'Upgrading')).toMatchObject({ status: 'False', reason: 'DowngradeRefused' });
    // The operator wrote etcd's own cluster version over the stale one.
    expect(cluster.status?.clusterVersion).toBe(clusterVersionOf(to));
    // Several health polls later: one Event, the pod untouched, the member serving every key.
    await consistently(
      'one DowngradeRefused Event, the pod not rolled',
      async () =>
        (await eventsAbout(client, namespace, 'moved', 'DowngradeRefused')).length === 1 &&
        (await podsOf('moved')).every((p) => podImage(p) === imageOf(to)),
      { forMs: 5000, intervalMs: 500 },
    );
    const [pod] = await podsOf('moved');
    expect(pod && podImage(pod)).toBe(imageOf(to));
    expect(pod?.status?.containerStatuses?.[0]?.restartCount).toBe(1);
    await expectKeyspaceOnEveryMember(
      await connectionTo(cluster, 1),
      (await connectionTo(cluster, 1)).endpoints,
      keys,
    );

    // Back to the version it runs: the refusal clears.
    await setVersion('moved', to);
    await waitUntil(
      'moved Running, not Degraded',
      async () => {
        const again = await get('moved');
        return again.status?.phase === 'Running' && conditionOf(again, 'Degraded')?.status === 'False';
      },
      poll,
    );
    await client.delete(etcdClusters, 'moved', namespace);
  }, 240_000);

  it('goes back from an upgrade stopped half-way by a member crash-looping on the new version', async () => {
    await createEtcdCluster(client, 'halfway', namespace, { size: 3, version: from });
    let cluster = await waitForVoters('halfway', 3);
    expect(cluster.status?.clusterVersion).toBe(clusterVersionOf(from));
    const ids = cluster.status?.members?.map((m) => m.id);
    const keys = await writeKeys(await connectionTo(cluster, 3), 'halfway/', 50);

    // The first member moves to the new version and runs well; then its image turns out broken on
    // the next member's node (a bad pull, a binary for another CPU): that member crash-loops.
    await setVersion('halfway', to);
    await waitUntil(
      `one member of halfway running ${to}`,
      async () => (await get('halfway')).status?.members?.some((m) => m.ready && m.version === to) === true,
      poll,
    );
    bed.runner.breakImage(imageOf(to) ?? '');
    await waitUntil(
      'a second member restarted on the broken image',
      async () => (await podsOf('halfway')).filter((p) => podImage(p) === imageOf(to)).length === 2,
      poll,
    );
    const broken = (await eventsAbout(client, namespace, 'halfway', 'MemberUpgrading'))
      .at(-1)
      ?.note?.split(' ')[1];
    // Stuck: the roll waits for the broken member, and etcd keeps the old cluster version.
    await consistently(
      'the roll waits: no third member moved',
      async () => (await eventsAbout(client, namespace, 'halfway', 'MemberUpgrading')).length === 2,
      { forMs: 5000, intervalMs: 500 },
    );
    cluster = await get('halfway');
    expect(await eventsAbout(client, namespace, 'halfway', 'MemberUpgrading')).toHaveLength(2);
    expect(cluster.status?.members?.find((m) => m.name === broken)?.ready).toBe(false);
    expect(cluster.status?.clusterVersion).toBe(clusterVersionOf(from));

    // Today's way out, and the only one short of a restore: back to the version it came from.
    await setVersion('halfway', from);
    await waitUntil(
      `every member of halfway back on ${from}`,
      async () => {
        const status = (await get('halfway')).status;
        return (
          status?.members?.length === 3 &&
          status.members.every((m) => m.ready && m.version === from) &&
          status.currentVersion === from &&
          status.clusterVersion === clusterVersionOf(from) &&
          status.phase === 'Running'
        );
      },
      poll,
    );
    cluster = await get('halfway');
    // The same members (IDs, claims, data), each restarted on the old release, the broken one first.
    expect(cluster.status?.members?.map((m) => m.id)).toEqual(ids);
    const back = await eventsAbout(client, namespace, 'halfway', 'MemberRollingBack');
    expect(back.map((e) => e.note?.split(' ')[1])).toHaveLength(2);
    expect(back[0]?.note).toMatch(new RegExp(`^restarting ${broken ?? '?'} on etcd ${from} \\(was ${to}\\)`));
    const pods = await podsOf('halfway');
    expect(pods.map((p) => p.metadata?.name).sort()).toEqual(
      cluster.status?.members?.map((m) => m.name).sort(),
    );
    expect(pods.map((p) => podImage(p))).toEqual([imageOf(from), imageOf(from), imageOf(from)]);
    const connection = await connectionTo(cluster, 3);
    const health = await readClusterHealth(connection);
    expect(health.members.map((m) => m.status?.version)).toEqual([from, from, from]);
    expect(health.clusterVersion).toBe(clusterVersionOf(from));
    await expectKeyspaceOnEveryMember(connection, connection.endpoints, keys);
  }, 360_000);
});
