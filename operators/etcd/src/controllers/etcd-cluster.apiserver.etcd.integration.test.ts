// The EtcdCluster controller with both sides real: a real kube-apiserver holds the EtcdCluster,
// its claims and pods, and a stand-in for the kubelet (MemberPodRunner) runs a real etcd process
// from each pod's own flags, with a data directory per claim. Bootstrap, scaling, a deleted pod,
// a lost claim, an operator restart in the middle of a scale and every pod deleted at once, with
// every key checked on every member.
import { setTimeout as sleep } from 'node:timers/promises';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { installCrds, waitUntil } from '@homeostat/testing';
import { sharedKubeConfig } from '@homeostat/testing/shared';
import type { V1Pod } from '@kubernetes/client-node';
import { restartedAtAnnotation } from '@homeostat/operator-kit';
import { builtin, KubeClient, type Manager } from '@homeostat/reconcile';
import { memoryLogger } from '@homeostat/reconcile/testing';
import { etcdBackupCrd } from '../api/etcd-backup-crd.ts';
import { etcdClusterCrd } from '../api/etcd-cluster-crd.ts';
import { etcdClusters, type EtcdCluster } from '../api/etcd-cluster-types.ts';
import { defaultVersion, minorOf, supportedVersions } from '../api/etcd-versions.ts';
import { openClient, type EtcdConnection } from '../connection.ts';
import { readClusterHealth } from '../health/cluster-health.ts';
import { memberIdHex } from '../member-id.ts';
import {
  conditionOf,
  createEtcdCluster,
  createTestNamespace,
  eventsAbout,
  startTestOperator,
} from '../test-support/etcd-cluster-fixtures.ts';
import { expectKeyspaceOnEveryMember, writeKeys } from '../test-support/keyspace.ts';
import { loopbackAddressing } from '../test-support/loopback-addressing.ts';
import { MemberPodRunner } from '../test-support/member-pod-runner.ts';
import { minRunningMs } from './rolling-upgrade.ts';

const kubeConfig = sharedKubeConfig();
const namespace = `etcd-run-${process.pid}`;
const client = new KubeClient(kubeConfig, { fieldManager: 'test-user' });
const poll = { timeoutMs: 90_000, intervalMs: 200 };
const get = (name: string) => client.get(etcdClusters, name, namespace);
const addressing = loopbackAddressing();

/** Client URLs of members `0 … size-1` of a cluster. */
async function clientUrls(cluster: EtcdCluster, size: number): Promise<string[]> {
  const names = Array.from({ length: size }, (_, i) => `${cluster.metadata?.name ?? ''}-${i}`);
  return Promise.all(names.map(async (n) => (await addressing.urls(cluster, n)).clientUrl));
}

/** How a client reaches the cluster: the members' URLs and the client certificate the operator made. */
async function connectionTo(cluster: EtcdCluster, size: number): Promise<EtcdConnection> {
  const secret = await client.get(builtin.secrets, `${cluster.metadata?.name ?? ''}-client-tls`, namespace);
  const file = (key: string) => Buffer.from(secret.data?.[key] ?? '', 'base64');
  return {
    endpoints: await clientUrls(cluster, size),
    credentials: { rootCertificate: file('ca.crt'), certChain: file('tls.crt'), privateKey: file('tls.key') },
  };
}

/** Waits until status shows `size` ready voting members, Running and converged. */
async function waitForVoters(name: string, size: number): Promise<EtcdCluster> {
  await waitUntil(
    `${name}: ${size} ready voting members, Running`,
    async () => {
      const status = (await get(name)).status;
      const voters = status?.members?.filter((m) => m.role === 'Voter' && m.ready) ?? [];
      return (
        status?.phase === 'Running' &&
        voters.length === size &&
        status.members?.length === size &&
        conditionOf(await get(name), 'Progressing')?.reason === 'Converged'
      );
    },
    poll,
  );
  return get(name);
}

describe('EtcdCluster controller driving real etcd members on a real kube-apiserver', () => {
  const { log, lines } = memoryLogger();
  let manager: Manager | undefined;
  let runner: MemberPodRunner;
  let workDir: string;
  let keys: Map<string, string>;

  beforeAll(async () => {
    // Both, as the chart installs them: the cluster controller reads EtcdBackups (the newest good one).
    await installCrds(kubeConfig, [etcdClusterCrd, etcdBackupCrd]);
    await createTestNamespace(client, namespace);
    workDir = await mkdtemp(join(tmpdir(), 'homeostat-etcd-pods-'));
    runner = new MemberPodRunner(client, namespace, workDir);
    runner.start();
    manager = await startTestOperator(kubeConfig, namespace, addressing, log);
  });

  // A failure says what the operator logged and what status it wrote, not only what timed out.
  afterEach(async (context) => {
    if (context.task.result?.state !== 'fail') return;
    const notable = lines.filter((l) => Number(l['level']) >= 40).slice(-20);
    console.warn(JSON.stringify({ operatorLog: notable, status: (await get('main')).status }, null, 1));
  });

  afterAll(async () => {
    await manager?.stop();
    await runner?.stop();
    await client.delete(builtin.namespaces, namespace).catch(() => undefined);
    client.close();
    await rm(workDir, { recursive: true, force: true });
  });

  it('creates a one-member cluster with TLS: Running, Available, its ID, leader and version in status', async () => {
    await createEtcdCluster(client, 'main', namespace, { size: 1 });
    const cluster = await waitForVoters('main', 1);
    const status = cluster.status;
    expect(status?.clusterId).toMatch(/^[0-9a-f]+$/);
    expect(status?.members).toEqual([
      expect.objectContaining({
        name: 'main-0',
        role: 'Voter',
        ready: true,
        leader: true,
        version: defaultVersion,
      }),
    ]);
    expect((await clientUrls(cluster, 1))[0]).toMatch(/^https:/);
    expect(status).toMatchObject({
      clientSecret: 'main-client-tls',
      readyMembers: 1,
      memberCount: 1,
      leader: 'main-0',
      currentVersion: defaultVersion,
    });
    expect(conditionOf(cluster, 'Available')).toMatchObject({ status: 'True', reason: 'QuorumHealthy' });
    expect(conditionOf(cluster, 'QuorumLost')).toMatchObject({ status: 'False' });
    expect((await eventsAbout(client, namespace, 'main', 'ClusterCreated'))[0]?.note).toBe(
      `etcd cluster ${status?.clusterId ?? ''} answers`,
    );
    keys = await writeKeys(await connectionTo(cluster, 1), 'k/', 200);
    // Client certificates are required: a client with only the CA is turned away.
    const { credentials, endpoints } = await connectionTo(cluster, 1);
    const anonymous = {
      endpoints,
      credentials: { rootCertificate: credentials?.rootCertificate ?? Buffer.alloc(0) },
      callTimeoutMs: 3000,
    };
    await expect(writeKeys(anonymous, 'anonymous/', 1)).rejects.toThrow();
  });

  it('scales 1 → 3 one learner at a time (added, started, promoted), every key on every member', async () => {
    await client.patch(etcdClusters, 'main', namespace, { spec: { size: 3 } });
    const cluster = await waitForVoters('main', 3);
    await expectKeyspaceOnEveryMember(await connectionTo(cluster, 3), await clientUrls(cluster, 3), keys);
    const added = await eventsAbout(client, namespace, 'main', 'MemberAdded');
    const promoted = await eventsAbout(client, namespace, 'main', 'MemberPromoted');
    expect(added.map((e) => e.note)).toEqual([
      'added main-1 to etcd as a learner',
      'added main-2 to etcd as a learner',
    ]);
    expect(promoted.map((e) => e.note)).toEqual([
      'promoted main-1 to a voting member',
      'promoted main-2 to a voting member',
    ]);
    // Each claim says which etcd member its data belongs to.
    for (const member of cluster.status?.members ?? []) {
      const claim = await client.get(builtin.persistentVolumeClaims, `${member.name}-data`, namespace);
      const recorded = claim.metadata?.annotations?.['etcd.homeostat.dev/member-id'];
      expect(member.name === 'main-0' ? 'seed' : member.id).toBe(recorded);
    }
    expect(await client.find(builtin.podDisruptionBudgets, 'main', namespace)).toBeDefined();
  });

  it('brings a deleted member pod back with its identity and data', async () => {
    const before = (await get('main')).status?.members?.find((m) => m.name === 'main-1')?.id;
    const uid = (await client.get(builtin.pods, 'main-1', namespace)).metadata?.uid;
    await client.delete(builtin.pods, 'main-1', namespace);
    await waitUntil(
      'main-1 made again, and ready',
      async () => {
        const pod = await client.find(builtin.pods, 'main-1', namespace);
        const ready = pod?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
        return pod !== undefined && pod.metadata?.uid !== uid && ready === true;
      },
      poll,
    );
    const cluster = await waitForVoters('main', 3);
    expect(cluster.status?.members?.find((m) => m.name === 'main-1')?.id).toBe(before);
    await expectKeyspaceOnEveryMember(await connectionTo(cluster, 3), await clientUrls(cluster, 3), keys);
  });

  it('replaces a member whose claim is deleted: removed, added back empty as a learner, promoted', async () => {
    const before = (await get('main')).status?.members?.find((m) => m.name === 'main-2')?.id;
    // Its pod still uses the claim, so the claim stays Terminating until the operator lets go.
    await client.delete(builtin.persistentVolumeClaims, 'main-2-data', namespace);
    await waitUntil(
      'main-2 replaced',
      async () => {
        const id = (await get('main')).status?.members?.find((m) => m.name === 'main-2')?.id;
        return id !== undefined && id !== before;
      },
      poll,
    );
    const cluster = await waitForVoters('main', 3);
    expect((await eventsAbout(client, namespace, 'main', 'MemberReplaced'))[0]).toMatchObject({
      type: 'Warning',
      note: 'the claim of main-2 is deleted, so its data is lost: removed it from etcd; it joins again empty as a learner',
    });
    await expectKeyspaceOnEveryMember(await connectionTo(cluster, 3), await clientUrls(cluster, 3), keys);
  });

  it('converges with no duplicate member when the operator is stopped right after a member is added', async () => {
    const addedBefore = (await eventsAbout(client, namespace, 'main', 'MemberAdded')).length;
    await client.patch(etcdClusters, 'main', namespace, { spec: { size: 5 } });
    await waitUntil(
      'a member added',
      async () => (await eventsAbout(client, namespace, 'main', 'MemberAdded')).length > addedBefore,
      poll,
    );
    await manager?.stop();
    manager = await startTestOperator(kubeConfig, namespace, addressing, log);
    const cluster = await waitForVoters('main', 5);
    const health = await readClusterHealth(await connectionTo(cluster, 5));
    expect(health.members.map((m) => m.member.name).sort()).toEqual([
      'main-0',
      'main-1',
      'main-2',
      'main-3',
      'main-4',
    ]);
    expect(new Set(health.members.map((m) => memberIdHex(m.member.id))).size).toBe(5);
    await expectKeyspaceOnEveryMember(await connectionTo(cluster, 5), await clientUrls(cluster, 5), keys);
  });

  it('brings every member back with its data when all pods are deleted at once', async () => {
    const ids = (await get('main')).status?.members?.map((m) => [m.name, m.id]);
    const pods = await client.list(builtin.pods, {
      namespace,
      labelSelector: 'app.kubernetes.io/instance=main',
    });
    const uids = new Set(pods.items.map((p) => p.metadata?.uid));
    await Promise.all(pods.items.map((p) => client.delete(builtin.pods, p.metadata?.name ?? '', namespace)));
    await waitUntil(
      'five new pods, ready',
      async () => {
        const now = await client.list(builtin.pods, {
          namespace,
          labelSelector: 'app.kubernetes.io/instance=main',
        });
        return (
          now.items.length === 5 &&
          now.items.every(
            (p) =>
              !uids.has(p.metadata?.uid) &&
              p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
          )
        );
      },
      poll,
    );
    const cluster = await waitForVoters('main', 5);
    expect(cluster.status?.members?.map((m) => [m.name, m.id])).toEqual(ids);
    await expectKeyspaceOnEveryMember(await connectionTo(cluster, 5), await clientUrls(cluster, 5), keys);
  });

  it('scales 5 → 1, removing one member at a time with its pod and claim, keys intact', async () => {
    await client.patch(etcdClusters, 'main', namespace, { spec: { size: 1 } });
    const cluster = await waitForVoters('main', 1);
    await waitUntil(
      'pods and claims of removed members deleted',
      async () => {
        const pods = await client.list(builtin.pods, {
          namespace,
          labelSelector: 'app.kubernetes.io/instance=main',
        });
        const claims = await client.list(builtin.persistentVolumeClaims, {
          namespace,
          labelSelector: 'app.kubernetes.io/instance=main',
        });
        return pods.items.length === 1 && claims.items.length === 1;
      },
      poll,
    );
    expect((await eventsAbout(client, namespace, 'main', 'MemberRemoved')).length).toBeGreaterThanOrEqual(4);
    expect(await client.find(builtin.podDisruptionBudgets, 'main', namespace)).toBeUndefined();
    await expectKeyspaceOnEveryMember(await connectionTo(cluster, 1), await clientUrls(cluster, 1), keys);
  });

  let oldKeys = new Map<string, string>();

  it('upgrades 3.6 → 3.7 one member at a time, each healthy on 3.7 before the next; refuses the way back', async () => {
    const [from, to] = supportedVersions;
    if (!from || !to) throw new Error('two supported versions are needed');
    await createEtcdCluster(client, 'old', namespace, { size: 3, version: from });
    let cluster = await waitForVoters('old', 3);
    expect(cluster.status?.currentVersion).toBe(from);
    const ids = cluster.status?.members?.map((m) => m.id);
    const leaderBefore = cluster.status?.leader ?? '';
    oldKeys = await writeKeys(await connectionTo(cluster, 3), 'old/', 50);

    // Sampled while it rolls: members not ready at once, and whether Upgrading was seen.
    let mostDown = 0;
    let sawUpgrading = false;
    let rolling = true;
    const sampler = (async () => {
      while (rolling) {
        const status = (await get('old')).status;
        mostDown = Math.max(mostDown, status?.members?.filter((m) => !m.ready).length ?? 0);
        const pods = await client.list(builtin.pods, {
          namespace,
          labelSelector: 'app.kubernetes.io/instance=old',
        });
        const podsNotReady = pods.items.filter(
          (p) => !p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
        ).length;
        mostDown = Math.max(mostDown, podsNotReady);
        if (conditionOf(await get('old'), 'Upgrading')?.status === 'True') sawUpgrading = true;
        await sleep(100);
      }
    })();
    try {
      await client.patch(etcdClusters, 'old', namespace, { spec: { version: to } });
      await waitUntil(
        `every member of old on ${to}`,
        async () => {
          const status = (await get('old')).status;
          return (
            status?.members?.length === 3 &&
            status.members.every((m) => m.ready && m.version === to) &&
            status.currentVersion === to &&
            // etcd moves its cluster version once every member runs the new minor.
            status.clusterVersion === `${minorOf(to)}.0` &&
            status.phase === 'Running'
          );
        },
        poll,
      );
    } finally {
      rolling = false;
      await sampler;
    }
    cluster = await get('old');
    expect(mostDown).toBeLessThanOrEqual(1);
    expect(sawUpgrading).toBe(true);
    expect(conditionOf(cluster, 'Upgrading')).toMatchObject({ status: 'False', reason: 'AtVersion' });
    // The same members, upgraded in place: IDs and data kept; etcd itself reports the new version.
    expect(cluster.status?.members?.map((m) => m.id)).toEqual(ids);
    const health = await readClusterHealth(await connectionTo(cluster, 3));
    expect(health.members.map((m) => m.status?.version)).toEqual([to, to, to]);
    const upgraded = await eventsAbout(client, namespace, 'old', 'MemberUpgrading');
    expect(upgraded).toHaveLength(3);
    // Each member restarts only once the one before has run its new container for minRunningMs
    // (the kubelet's first Ready after a restart may not last).
    const restartedAt = upgraded.map((e) => Date.parse(String(e.eventTime)));
    for (let i = 1; i < restartedAt.length; i++)
      expect((restartedAt[i] ?? 0) - (restartedAt[i - 1] ?? 0)).toBeGreaterThanOrEqual(minRunningMs);
    // Followers first, the leader last, so leadership moves once.
    expect(upgraded.at(-1)?.note).toMatch(new RegExp(`^restarting ${leaderBefore} on etcd ${to} `));
    // And handed to an upgraded member before the leader's restart: no election with a member down.
    const moved = await eventsAbout(client, namespace, 'old', 'LeadershipMoved');
    expect(moved.map((e) => e.note)).toEqual([
      expect.stringMatching(
        new RegExp(`^moved leadership from ${leaderBefore} to old-[0-9] before restarting ${leaderBefore} `),
      ),
    ]);
    expect(String(moved[0]?.eventTime) <= String(upgraded.at(-1)?.eventTime)).toBe(true);
    expect(cluster.status?.leader).not.toBe(leaderBefore);
    await expectKeyspaceOnEveryMember(await connectionTo(cluster, 3), await clientUrls(cluster, 3), oldKeys);
    await expect(client.patch(etcdClusters, 'old', namespace, { spec: { version: from } })).rejects.toThrow(
      `cannot downgrade from ${to} to ${from}: etcd ${minorOf(to)} cannot go back to ${minorOf(from)} once the cluster version is ${minorOf(to)}`,
    );
  });

  it('restarts every member on a restart request, one at a time and the leader last, with identities and keys kept', async () => {
    await createEtcdCluster(client, 'again', namespace, { size: 3 });
    let cluster = await waitForVoters('again', 3);
    const ids = cluster.status?.members?.map((m) => m.id);
    const leaderBefore = cluster.status?.leader ?? '';
    const written = await writeKeys(await connectionTo(cluster, 3), 'again/', 50);
    const podsOf = async () =>
      (await client.list(builtin.pods, { namespace, labelSelector: 'app.kubernetes.io/instance=again' }))
        .items;
    const uids = new Map((await podsOf()).map((p) => [p.metadata?.name, p.metadata?.uid]));
    const isReady = (p: V1Pod) =>
      p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
    const requestedAt = '2026-11-28T01:45:00.000Z';

    // Down by the operator's doing: a member whose pod is gone, being deleted, or made again and not
    // Ready yet. (A pod the restart has not reached, or one Ready once since it was made again, is
    // not counted when a probe fails on a loaded machine: that is the probe, not the restart.)
    let mostDown = 0;
    let rolling = true;
    const readyOnce = new Set<string>();
    const sampler = (async () => {
      while (rolling) {
        const pods = await podsOf();
        for (const p of pods) if (isReady(p)) readyOnce.add(p.metadata?.uid ?? '');
        const up = pods.filter((p) => {
          const uid = p.metadata?.uid ?? '';
          return !p.metadata?.deletionTimestamp && (uids.get(p.metadata?.name) === uid || readyOnce.has(uid));
        });
        mostDown = Math.max(mostDown, 3 - up.length);
        await sleep(100);
      }
    })();
    try {
      // An annotation: the generation stays, so only the predicate on it wakes the controller.
      await client.patch(etcdClusters, 'again', namespace, {
        metadata: { annotations: { [restartedAtAnnotation]: requestedAt } },
      });
      await waitUntil(
        'every pod of again made again under the request, and ready',
        async () => {
          const pods = await podsOf();
          return (
            pods.length === 3 &&
            pods.every(
              (p) =>
                p.metadata?.annotations?.[restartedAtAnnotation] === requestedAt &&
                p.metadata.uid !== uids.get(p.metadata.name) &&
                isReady(p),
            )
          );
        },
        poll,
      );
      cluster = await waitForVoters('again', 3);
    } finally {
      rolling = false;
      await sampler;
    }
    expect(mostDown).toBeLessThanOrEqual(1);
    // The same members on the same claims: recreated pods, not replaced members.
    expect(cluster.status?.members?.map((m) => m.id)).toEqual(ids);
    await expectKeyspaceOnEveryMember(await connectionTo(cluster, 3), await clientUrls(cluster, 3), written);
    expect((await eventsAbout(client, namespace, 'again', 'RestartRequested')).map((e) => e.note)).toEqual([
      `restarting every member, one at a time and the leader last (${restartedAtAnnotation}=${requestedAt})`,
    ]);
    const recreated = await eventsAbout(client, namespace, 'again', 'MemberRecreated');
    expect(recreated).toHaveLength(3);
    const times = recreated.map((e) => Date.parse(String(e.eventTime)));
    for (let i = 1; i < times.length; i++)
      expect((times[i] ?? 0) - (times[i - 1] ?? 0)).toBeGreaterThanOrEqual(minRunningMs);
    expect(recreated.at(-1)?.note).toMatch(
      new RegExp(`^recreating the pod of ${leaderBefore} with its claim`),
    );
    const moved = await eventsAbout(client, namespace, 'again', 'LeadershipMoved');
    expect(moved.map((e) => e.note)).toEqual([
      expect.stringMatching(new RegExp(`^moved leadership from ${leaderBefore} to again-[0-9] `)),
    ]);

    // Settled: the request is carried out once, nothing rolls again.
    await sleep(3 * minRunningMs);
    expect(await eventsAbout(client, namespace, 'again', 'MemberRecreated')).toHaveLength(3);
  });

  it('defragments members over the fragmentation threshold one at a time, the leader last, keys intact', async () => {
    let cluster = await get('old');
    const connection = await connectionTo(cluster, 3);
    const leader = cluster.status?.leader ?? '';
    const before = (await readClusterHealth(connection)).members.map((m) => m.status?.dbSizeBytes ?? 0);
    // Fill the database file with 6 MB of values, then delete them and compact the history: the
    // file keeps its size while most of its pages are free. (The default policy leaves files under
    // 100 MiB alone, so nothing is defragmented until the spec asks.)
    const etcd = openClient(connection);
    try {
      const value = 'x'.repeat(20_000);
      for (let i = 0; i < 300; i++) await etcd.put(`frag/${i}`).value(value);
      await etcd.delete().prefix('frag/');
      const revision = (await etcd.get('old/0000').exec()).header.revision;
      await etcd.kv.compact({ revision, physical: true });
      // bbolt hands the freed pages back only when later write transactions commit.
      for (let i = 0; i < 10; i++) {
        await etcd.put(`old/poke${i}`).value('poke');
        oldKeys.set(`old/poke${i}`, 'poke');
        await sleep(150);
      }
    } finally {
      etcd.close();
    }
    const grown = (await readClusterHealth(connection)).members.map((m) => m.status?.dbSizeBytes ?? 0);
    grown.forEach((size, i) => expect(size).toBeGreaterThan((before[i] ?? 0) + 4_000_000));
    expect(await eventsAbout(client, namespace, 'old', 'MemberDefragmented')).toEqual([]);

    await client.patch(etcdClusters, 'old', namespace, {
      spec: { defragmentation: { fragmentationPercent: 30, minimumDbSizeMiB: 1 } },
    });
    await waitUntil(
      'three members defragmented',
      async () => (await eventsAbout(client, namespace, 'old', 'MemberDefragmented')).length >= 3,
      poll,
    );
    const events = await eventsAbout(client, namespace, 'old', 'MemberDefragmented');
    expect(events).toHaveLength(3);
    // Followers first, the leader last; each member once.
    expect(events.at(-1)?.note).toMatch(new RegExp(`^defragmented ${leader} \\(`));
    expect(new Set(events.map((e) => /^defragmented (\S+)/.exec(e.note ?? '')?.[1])).size).toBe(3);
    const after = (await readClusterHealth(connection)).members.map((m) => m.status?.dbSizeBytes ?? 0);
    after.forEach((size, i) => expect(size).toBeLessThan((grown[i] ?? 0) / 2));
    cluster = await waitForVoters('old', 3);
    await expectKeyspaceOnEveryMember(connection, await clientUrls(cluster, 3), oldKeys);
  });
});
