import { afterEach, describe, expect, it } from 'vitest';
import { waitUntil } from '@homeostat/testing';
import { destroyEtcdMember, startEtcdCluster, type EtcdTestCluster } from '@homeostat/testing/etcd';
import type { EtcdConnection } from '../connection.ts';
import { readClusterHealth } from '../health/cluster-health.ts';
import { compareHashKV } from '../health/hash-kv.ts';
import { convergeMembership, reconcileMembershipStep, replaceMember } from './membership-reconciler.ts';
import { desiredMembers, localMemberRuntime } from '../test-support/local-member-runtime.ts';
import { expectKeyspaceOnEveryMember, writeKeys } from '../test-support/keyspace.ts';
import { must } from '../test-support/must.ts';

let cluster: EtcdTestCluster | undefined;
afterEach(async () => {
  await cluster?.stop();
  cluster = undefined;
});

const names = (n: number) => Array.from({ length: n }, (_, i) => `etcd-${i}`);

describe('member recovery on real etcd processes', () => {
  it('replaces a member killed with its data dir lost: removed, re-added fresh, caught up', async () => {
    cluster = await startEtcdCluster({ size: 3 });
    const runtime = localMemberRuntime(cluster);
    const desired = await desiredMembers(cluster, names(3));
    const connection: EtcdConnection = { endpoints: desired.map((d) => d.clientUrl) };
    const before = await writeKeys(connection, 'before/', 100);
    const oldId = must(
      (await readClusterHealth(connection)).members.find((m) => m.member.name === 'etcd-2'),
      'etcd-2 in the member list',
    ).member.id;

    await destroyEtcdMember(must(cluster.members.get('etcd-2'), 'etcd-2 process'));
    await waitUntil(
      'etcd-2 reported down',
      async () => (await readClusterHealth(connection)).healthyVoters === 2,
      { timeoutMs: 30_000 },
    );
    // Writes go on with two of three, and must reach the replacement too.
    const during = await writeKeys({ endpoints: desired.slice(0, 2).map((d) => d.clientUrl) }, 'during/', 50);

    expect(await replaceMember(connection, must(desired[2], 'etcd-2'), { runtime })).toEqual({
      removed: true,
    });
    await convergeMembership(connection, desired, { runtime });

    const health = await readClusterHealth(connection);
    expect(health.state).toBe('Healthy');
    expect(health.members).toHaveLength(3);
    const replacement = must(
      health.members.find((m) => m.member.name === 'etcd-2'),
      'new etcd-2',
    );
    expect(replacement.member.id).not.toBe(oldId); // a new identity, not the lost one
    expect(replacement.member.isLearner).toBe(false);
    await expectKeyspaceOnEveryMember(
      connection,
      desired.map((d) => d.clientUrl),
      new Map([...before, ...during]),
    );
    const hashes = await compareHashKV(
      connection,
      desired.map((d) => d.clientUrl),
    );
    expect(hashes.consistent).toBe(true);
  });

  it('refuses to replace a member whose removal would break quorum, and leaves its process running', async () => {
    cluster = await startEtcdCluster({ size: 3 });
    const runtime = localMemberRuntime(cluster);
    const desired = await desiredMembers(cluster, names(3));
    const connection: EtcdConnection = { endpoints: desired.map((d) => d.clientUrl) };
    const before = await writeKeys(connection, 'before/', 20);

    // Another member is down: etcd-0 and etcd-2 are the majority of three.
    await must(cluster.members.get('etcd-1'), 'etcd-1 process').process.stop(2000);
    await waitUntil(
      'etcd-1 reported down',
      async () => (await readClusterHealth(connection)).healthyVoters === 2,
      { timeoutMs: 30_000 },
    );

    // Replacing etcd-2 (its data said lost) would leave one healthy member of two.
    await expect(replaceMember(connection, must(desired[2], 'etcd-2'), { runtime })).rejects.toMatchObject({
      reason: 'WouldLoseQuorum',
    });
    // Checked before acting: etcd-2 still runs, the cluster still has quorum and takes writes.
    expect(must(cluster.members.get('etcd-2'), 'etcd-2 process').process.isRunning()).toBe(true);
    const health = await readClusterHealth(connection);
    expect(health.hasQuorum).toBe(true);
    expect(health.members).toHaveLength(3);
    const live = [must(desired[0], 'etcd-0').clientUrl, must(desired[2], 'etcd-2').clientUrl];
    const after = await writeKeys({ endpoints: live }, 'after/', 5);
    await expectKeyspaceOnEveryMember(connection, live, new Map([...before, ...after]));
  });

  it('converges after a crash right after memberAdd, without a duplicate member', async () => {
    cluster = await startEtcdCluster({ size: 1 });
    const runtime = localMemberRuntime(cluster);
    const desired = await desiredMembers(cluster, names(3));
    const connection: EtcdConnection = { endpoints: desired.map((d) => d.clientUrl) };
    await writeKeys({ endpoints: [must(desired[0], 'etcd-0').clientUrl] }, 'k/', 20);

    // First engine: one step, which is the memberAdd; then it "crashes" (nothing more runs, nothing is kept).
    const first = await reconcileMembershipStep(connection, desired, { runtime });
    expect(first).toEqual({ kind: 'changed', action: 'add-learner', member: 'etcd-1' });
    const afterCrash = await readClusterHealth(connection);
    expect(afterCrash.members).toHaveLength(2);
    const pending = must(afterCrash.learners[0], 'the added learner');
    expect(pending.member.started).toBe(false);
    expect(cluster.members.has('etcd-1')).toBe(false); // its process never started

    // A fresh engine (new connection object, no memory) converges from the member list alone.
    const fresh: EtcdConnection = { endpoints: [...connection.endpoints] };
    const steps = await convergeMembership(fresh, desired, { runtime });
    expect(steps.filter((s) => s.kind === 'changed' && s.action === 'add-learner')).toEqual([
      { kind: 'changed', action: 'add-learner', member: 'etcd-2' },
    ]);
    const health = await readClusterHealth(fresh);
    expect(health.members.map((m) => m.member.name).sort()).toEqual(names(3));
    expect(health.votingMembers).toBe(3);
    const peerUrls = health.members.flatMap((m) => m.member.peerUrls);
    expect(new Set(peerUrls).size).toBe(peerUrls.length);
    // etcd-1 kept the ID memberAdd gave it before the crash.
    expect(health.members.find((m) => m.member.name === 'etcd-1')?.member.id).toBe(pending.member.id);
  });
});
