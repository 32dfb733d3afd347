import { describe, expect, it } from 'vitest';
import { quorumOf, type ClusterHealth } from '../health/cluster-health.ts';
import type { MemberHealth } from '../health/member-status.ts';
import { checkAddLearner, checkPromote, checkRemove, learnerInSync } from './safety.ts';

function member(
  id: string,
  options: { healthy?: boolean; learner?: boolean; leader?: boolean; applied?: string } = {},
): MemberHealth {
  const healthy = options.healthy ?? true;
  return {
    member: {
      id,
      name: `m${id}`,
      peerUrls: [`http://127.0.0.1:1${id}`],
      clientUrls: [`http://127.0.0.1:2${id}`],
      isLearner: options.learner ?? false,
      started: true,
    },
    status: healthy
      ? {
          leaderId: '1',
          raftTerm: '2',
          raftIndex: options.applied ?? '100',
          raftAppliedIndex: options.applied ?? '100',
          dbSizeBytes: 1,
          dbSizeInUseBytes: 1,
          version: '3.6.16',
          isLearner: options.learner ?? false,
          errors: [],
        }
      : undefined,
    error: healthy ? undefined : 'down',
    reachable: healthy,
    healthy,
    isLeader: options.leader ?? false,
    alarms: [],
  };
}

function cluster(...members: MemberHealth[]): ClusterHealth {
  const voters = members.filter((m) => !m.member.isLearner);
  const healthy = voters.filter((m) => m.healthy).length;
  const leader = members.find((m) => m.isLeader);
  return {
    members,
    votingMembers: voters.length,
    healthyVoters: healthy,
    quorum: quorumOf(voters.length),
    hasQuorum: healthy >= quorumOf(voters.length) && leader !== undefined,
    leader,
    learners: members.filter((m) => m.member.isLearner),
    alarms: [],
    state: 'Healthy',
    linearizableList: true,
    clusterId: '1',
    clusterVersion: '3.6.0',
  };
}

describe('membership safety rules', () => {
  it('allows one learner at a time, and none without quorum', () => {
    expect(checkAddLearner(cluster(member('1', { leader: true })), 'http://x:1').ok).toBe(true);
    const withLearner = cluster(member('1', { leader: true }), member('2', { learner: true }));
    expect(checkAddLearner(withLearner, 'http://x:1')).toMatchObject({
      ok: false,
      reason: 'LearnerAlreadyExists',
    });
    const noQuorum = cluster(
      member('1', { leader: true }),
      member('2', { healthy: false }),
      member('3', { healthy: false }),
    );
    expect(checkAddLearner(noQuorum, 'http://x:1')).toMatchObject({ ok: false, reason: 'NoQuorum' });
  });

  it('promotes a learner only once it has applied 90% of the leader log', () => {
    const leader = member('1', { leader: true, applied: '1000' });
    expect(learnerInSync(member('2', { learner: true, applied: '900' }), leader)).toBe(true);
    expect(learnerInSync(member('2', { learner: true, applied: '899' }), leader)).toBe(false);
    const behind = member('2', { learner: true, applied: '10' });
    expect(checkPromote(cluster(leader, behind), behind)).toMatchObject({
      ok: false,
      reason: 'LearnerNotInSync',
    });
    const caughtUp = member('2', { learner: true, applied: '1000' });
    expect(checkPromote(cluster(leader, caughtUp), caughtUp).ok).toBe(true);
  });

  it('keeps uint64 raft indexes exact beyond 2^53', () => {
    const leader = member('1', { leader: true, applied: '18446744073709551610' });
    expect(learnerInSync(member('2', { learner: true, applied: '18446744073709551609' }), leader)).toBe(true);
    expect(learnerInSync(member('2', { learner: true, applied: '9007199254740993' }), leader)).toBe(false);
  });

  it('refuses removals that lose quorum, the last voter, and two-member removal unless asked', () => {
    const three = [member('1', { leader: true }), member('2'), member('3', { healthy: false })];
    expect(checkRemove(cluster(...three), three[1] as MemberHealth)).toMatchObject({
      reason: 'WouldLoseQuorum',
    });
    expect(checkRemove(cluster(...three), three[2] as MemberHealth).ok).toBe(true);
    const two = [member('1', { leader: true }), member('2')];
    expect(checkRemove(cluster(...two), two[1] as MemberHealth)).toMatchObject({
      reason: 'TwoMemberRemoval',
    });
    expect(checkRemove(cluster(...two), two[1] as MemberHealth, { allowTwoMemberRemoval: true }).ok).toBe(
      true,
    );
    const twoOneDown = [member('1', { leader: true }), member('2', { healthy: false })];
    expect(
      checkRemove(cluster(...twoOneDown), twoOneDown[1] as MemberHealth, { allowTwoMemberRemoval: true }),
    ).toMatchObject({
      ok: false,
    });
    const one = member('1', { leader: true });
    expect(checkRemove(cluster(one), one)).toMatchObject({ reason: 'WouldLoseQuorum' });
    const learner = member('4', { learner: true });
    expect(checkRemove(cluster(...two, learner), learner).ok).toBe(true);
  });
});
