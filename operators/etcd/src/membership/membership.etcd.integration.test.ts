import { afterEach, describe, expect, it } from 'vitest';
import { startEtcdCluster, type EtcdTestCluster } from '@homeostat/testing/etcd';
import type { EtcdConnection } from '../connection.ts';
import { readClusterHealth } from '../health/cluster-health.ts';
import { addLearner, removeMember } from './membership-changes.ts';
import { convergeMembership, type StepOutcome } from './membership-reconciler.ts';
import { EtcdEngineError } from '../errors.ts';
import { waitUntil } from '@homeostat/testing';
import { desiredMembers, localMemberRuntime } from '../test-support/local-member-runtime.ts';
import { expectKeyspaceOnEveryMember, writeKeys } from '../test-support/keyspace.ts';
import { must } from '../test-support/must.ts';
import { retryWhileTransient } from '../test-support/retry-while-transient.ts';

let cluster: EtcdTestCluster | undefined;

async function waitForUnhealthy(connection: EtcdConnection, id: string): Promise<void> {
  await waitUntil(
    `member ${id} reported unhealthy`,
    async () => !(await readClusterHealth(connection)).members.find((m) => m.member.id === id)?.healthy,
    { timeoutMs: 30_000, intervalMs: 200 },
  );
}
afterEach(async () => {
  await cluster?.stop();
  cluster = undefined;
});

async function connectionFor(c: EtcdTestCluster, names: readonly string[]): Promise<EtcdConnection> {
  const urls = await Promise.all(names.map(async (n) => (await c.address(n)).clientUrl));
  return { endpoints: urls };
}

const names = (n: number) => Array.from({ length: n }, (_, i) => `etcd-${i}`);

describe('membership on real etcd processes', () => {
  it('bootstraps a three-member cluster that reports one leader, quorum and no learner', async () => {
    cluster = await startEtcdCluster({ size: 3 });
    const health = await readClusterHealth(await connectionFor(cluster, names(3)));
    expect(health.state).toBe('Healthy');
    expect(health.votingMembers).toBe(3);
    expect(health.healthyVoters).toBe(3);
    expect(health.hasQuorum).toBe(true);
    expect(health.learners).toHaveLength(0);
    expect(health.members.filter((m) => m.isLeader)).toHaveLength(1);
    for (const m of health.members) {
      expect(m.member.id).toMatch(/^\d+$/); // uint64 kept as a decimal string
      expect(BigInt(m.status?.raftTerm ?? '0')).toBeGreaterThan(0n);
      expect(BigInt(m.status?.raftIndex ?? '0')).toBeGreaterThan(0n);
      expect(m.status?.dbSizeBytes).toBeGreaterThan(0);
      expect(m.status?.dbSizeInUseBytes).toBeGreaterThan(0);
      expect(m.status?.leaderId).toBe(health.leader?.member.id);
      expect(m.alarms).toEqual([]);
    }
  });

  it('scales 1 → 3 → 5 → 3 → 1 through learner add, promote and remove, keeping every key', async () => {
    cluster = await startEtcdCluster({ size: 1 });
    const runtime = localMemberRuntime(cluster);
    const connection = await connectionFor(cluster, names(5));
    const expected = new Map<string, string>();
    const actions: StepOutcome[] = [];

    for (const [step, size] of [1, 3, 5, 3, 1].entries()) {
      const desired = await desiredMembers(cluster, names(size));
      await convergeMembership(connection, desired, {
        runtime,
        allowTwoMemberRemoval: true,
        onStep: (o) => actions.push(o),
      });
      const health = await readClusterHealth(connection);
      expect(health.votingMembers, `voting members after scaling to ${size}`).toBe(size);
      expect(health.healthyVoters).toBe(size);
      expect(health.learners).toHaveLength(0);
      expect(health.members.map((m) => m.member.name).sort()).toEqual(names(size));
      const running = { endpoints: desired.map((d) => d.clientUrl) };
      for (const [k, v] of await writeKeys(running, `step${step}/`, 20)) expected.set(k, v);
      await expectKeyspaceOnEveryMember(
        connection,
        desired.map((d) => d.clientUrl),
        expected,
      );
    }
    // Growth went through learners only: every added member was added, started and promoted.
    const changed = actions.filter((a) => a.kind === 'changed');
    expect(changed.filter((a) => a.action === 'add-learner')).toHaveLength(4);
    expect(changed.filter((a) => a.action === 'promote')).toHaveLength(4);
    expect(changed.filter((a) => a.action === 'remove')).toHaveLength(4);
  });

  it('refuses a second learner, a two-member removal and a removal that would lose quorum, with reasons', async () => {
    cluster = await startEtcdCluster({ size: 3 });
    const connection = await connectionFor(cluster, names(3));
    const [spare0, spare1] = [await cluster.address('spare-0'), await cluster.address('spare-1')];

    // A second learner while the first (never started) waits for promotion. etcd itself refuses
    // changes for a few seconds after start, until every voter has been connected for a while.
    const first = await retryWhileTransient(() => addLearner(connection, spare0.peerUrl));
    expect(first.added).toBe(true);
    expect(first.member.isLearner).toBe(true);
    const again = await addLearner(connection, spare0.peerUrl);
    expect(again).toMatchObject({ added: false, member: { id: first.member.id } });
    await expect(addLearner(connection, spare1.peerUrl)).rejects.toMatchObject({
      reason: 'LearnerAlreadyExists',
    });
    await removeMember(connection, first.member.id);

    // One member down in a three-member cluster: removing a healthy one would leave 1 of 2.
    const health = await readClusterHealth(connection);
    const [down, healthy] = [must(health.members[0], 'member 0'), must(health.members[1], 'member 1')];
    await must(cluster.members.get(down.member.name), 'process of member 0').process.stop();
    await waitForUnhealthy(connection, down.member.id);
    const refusal = await removeMember(connection, healthy.member.id).catch((e: unknown) => e);
    expect(refusal).toBeInstanceOf(EtcdEngineError);
    expect(refusal).toMatchObject({ reason: 'WouldLoseQuorum' });
    expect(String((refusal as Error).message)).toMatch(/below the quorum/);

    // Removing the dead member is safe and leaves a two-member cluster...
    expect(await retryWhileTransient(() => removeMember(connection, down.member.id))).toEqual({
      removed: true,
    });
    expect(await removeMember(connection, down.member.id)).toEqual({ removed: false });
    // ...from which a removal is refused unless explicitly accepted.
    await expect(removeMember(connection, healthy.member.id)).rejects.toMatchObject({
      reason: 'TwoMemberRemoval',
    });
    expect((await readClusterHealth(connection)).votingMembers).toBe(2);
  });
});
