// Which member the operator defragments, if any: over the threshold and the size floor, followers
// before the leader, the most fragmented first, and never when a member is down, a learner is
// catching up or fewer than three voters would keep quorum without it.
import { describe, expect, it } from 'vitest';
import type { ClusterHealth } from '../health/cluster-health.ts';
import type { MemberHealth } from '../health/member-status.ts';
import { testCluster } from '../test-support/test-cluster.ts';
import { fragmentationOf, memberToDefragment } from './cluster-maintenance.ts';

const MiB = 1024 * 1024;

function member(
  name: string,
  sizeMiB: number,
  inUseMiB: number,
  extra: Partial<MemberHealth> = {},
): MemberHealth {
  return {
    member: {
      id: name,
      name,
      peerUrls: [],
      clientUrls: [`https://${name}:2379`],
      isLearner: false,
      started: true,
    },
    status: {
      leaderId: 'a',
      raftTerm: '2',
      raftIndex: '10',
      raftAppliedIndex: '10',
      dbSizeBytes: sizeMiB * MiB,
      dbSizeInUseBytes: inUseMiB * MiB,
      version: '3.7.3',
      isLearner: false,
      errors: [],
    },
    error: undefined,
    reachable: true,
    healthy: true,
    isLeader: name === 'a',
    alarms: [],
    ...extra,
  };
}

function health(members: MemberHealth[]): ClusterHealth {
  const voters = members.filter((m) => !m.member.isLearner);
  return {
    members,
    votingMembers: voters.length,
    healthyVoters: voters.filter((m) => m.healthy).length,
    quorum: Math.floor(voters.length / 2) + 1,
    hasQuorum: true,
    leader: members.find((m) => m.isLeader),
    learners: members.filter((m) => m.member.isLearner),
    alarms: [],
    state: 'Healthy',
    linearizableList: true,
    clusterId: '1',
    clusterVersion: '3.6.0',
  };
}

describe('memberToDefragment', () => {
  const cluster = testCluster({ defragmentation: { fragmentationPercent: 50, minimumDbSizeMiB: 100 } });

  it('picks the most fragmented follower over the threshold and the size floor, the leader only last', () => {
    expect(fragmentationOf(member('b', 200, 50))).toBe(0.75);
    const chosen = memberToDefragment(
      cluster,
      health([
        member('a', 400, 10),
        member('b', 200, 90),
        member('c', 200, 40),
        member('d', 50, 1),
        member('e', 300, 250),
      ]),
    );
    expect(chosen?.member.name).toBe('c');
    expect(
      memberToDefragment(cluster, health([member('a', 400, 10), member('b', 200, 150), member('c', 50, 1)]))
        ?.member.name,
    ).toBe('a');
  });

  it('leaves the cluster alone when a member is down, a learner catches up, fewer than three vote, or it is turned off', () => {
    const fragmented = () => [member('a', 400, 10), member('b', 400, 10), member('c', 400, 10)];
    expect(memberToDefragment(cluster, health(fragmented()))).toBeDefined();
    const [a, b] = fragmented();
    if (!a || !b) throw new Error('unreachable');
    expect(
      memberToDefragment(cluster, health([a, b, member('c', 400, 10, { healthy: false })])),
    ).toBeUndefined();
    const learner = member('d', 1, 1);
    expect(
      memberToDefragment(
        cluster,
        health([...fragmented(), { ...learner, member: { ...learner.member, isLearner: true } }]),
      ),
    ).toBeUndefined();
    expect(memberToDefragment(cluster, health([a]))).toBeUndefined();
    const off = testCluster({ defragmentation: { fragmentationPercent: 0, minimumDbSizeMiB: 0 } });
    expect(memberToDefragment(off, health(fragmented()))).toBeUndefined();
  });
});
