// handOverLeadership's choice of successor, without etcd: a choice that leaves no voter returns
// before any request (the connection here points at a closed port, so a request would fail).
import { describe, expect, it } from 'vitest';
import { quorumOf, type ClusterHealth } from '../health/cluster-health.ts';
import type { MemberHealth } from '../health/member-status.ts';
import { handOverLeadership } from './membership-changes.ts';

function voter(id: string, leader = false): MemberHealth {
  return {
    member: {
      id,
      name: `m${id}`,
      peerUrls: [`http://127.0.0.1:1${id}`],
      clientUrls: ['http://127.0.0.1:1'],
      isLearner: false,
      started: true,
    },
    status: {
      leaderId: '1',
      raftTerm: '2',
      raftIndex: '100',
      raftAppliedIndex: '100',
      dbSizeBytes: 1,
      dbSizeInUseBytes: 1,
      version: '3.6.16',
      isLearner: false,
      errors: [],
    },
    error: undefined,
    reachable: true,
    healthy: true,
    isLeader: leader,
    alarms: [],
  };
}

function cluster(...members: MemberHealth[]): ClusterHealth {
  return {
    members,
    votingMembers: members.length,
    healthyVoters: members.length,
    quorum: quorumOf(members.length),
    hasQuorum: true,
    leader: members.find((m) => m.isLeader),
    learners: [],
    alarms: [],
    state: 'Healthy',
    linearizableList: true,
    clusterId: '1',
    clusterVersion: '3.6.0',
  };
}

describe('handOverLeadership', () => {
  it('moves leadership nowhere when `only` accepts no other voter (no move back to a leader that refused)', async () => {
    // Leadership moved off 1, then off 2, and 3 refuses too: 1 and 2 refused before in this run,
    // so a move back to either is a leadership change that cannot help (ADR 0312: at most voters-1).
    const members = [voter('1'), voter('2'), voter('3', true)];
    const leader = members[2] as MemberHealth;
    const movedFrom = new Set(['1', '2']);
    const connection = { endpoints: ['http://127.0.0.1:1'], callTimeoutMs: 1_000 };
    await expect(
      handOverLeadership(connection, cluster(...members), leader, {
        only: (m) => !movedFrom.has(m.member.id),
      }),
    ).resolves.toBeUndefined();
  });
});
