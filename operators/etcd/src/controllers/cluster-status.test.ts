// Status is a pure function of what a reconcile observed: etcd's view, the step, the problem.
import { describe, expect, it } from 'vitest';
import type { EtcdClusterStatusFields } from '../api/etcd-cluster-types.ts';
import { testCluster } from '../test-support/test-cluster.ts';
import { quorumOf, type ClusterHealth } from '../health/cluster-health.ts';
import type { MemberHealth } from '../health/member-status.ts';
import type { DesiredMember } from '../membership/membership-reconciler.ts';
import { clusterStatus, oldestVersion, type ClusterObservation } from './cluster-status.ts';

const cluster = testCluster;

const desired = (n: number): DesiredMember[] =>
  Array.from({ length: n }, (_, i) => ({
    name: `orders-${i}`,
    peerUrl: `http://orders-${i}:2380`,
    clientUrl: `http://orders-${i}:2379`,
  }));

function member(
  ordinal: number,
  options: { healthy?: boolean; learner?: boolean; leader?: boolean; version?: string } = {},
): MemberHealth {
  const healthy = options.healthy ?? true;
  const id = String(1000 + ordinal);
  return {
    member: {
      id,
      name: `orders-${ordinal}`,
      peerUrls: [`http://orders-${ordinal}:2380`],
      clientUrls: [`http://orders-${ordinal}:2379`],
      isLearner: options.learner ?? false,
      started: true,
    },
    status: healthy
      ? {
          leaderId: '1000',
          raftTerm: '2',
          raftIndex: '100',
          raftAppliedIndex: '100',
          dbSizeBytes: 20480,
          dbSizeInUseBytes: 16384,
          version: options.version ?? '3.6.16',
          isLearner: options.learner ?? false,
          errors: [],
        }
      : undefined,
    error: healthy ? undefined : 'connection refused',
    reachable: healthy,
    healthy,
    isLeader: options.leader ?? false,
    alarms: [],
  };
}

function health(...members: MemberHealth[]): ClusterHealth {
  const voters = members.filter((m) => !m.member.isLearner);
  const healthy = voters.filter((m) => m.healthy).length;
  const quorum = quorumOf(voters.length);
  const leader = healthy >= quorum ? members.find((m) => m.isLeader) : undefined;
  return {
    members,
    votingMembers: voters.length,
    healthyVoters: healthy,
    quorum,
    hasQuorum: healthy >= quorum && leader !== undefined,
    leader,
    learners: members.filter((m) => m.member.isLearner),
    alarms: [],
    state: 'Healthy',
    linearizableList: true,
    clusterId: '255',
    clusterVersion: '3.6.0',
  };
}

const observation = (o: Partial<ClusterObservation>): ClusterObservation => ({
  desired: desired(3),
  health: undefined,
  clientEndpoint: 'http://orders.shop.svc.cluster.local:2379',
  ...o,
});

const condition = (status: EtcdClusterStatusFields, type: string) =>
  status.conditions?.find((c) => c.type === type);

describe('EtcdCluster status', () => {
  it('is Restoring while the first member is made from a backup, then Restored; a refused backup says why', () => {
    const restored = cluster({ bootstrap: { fromBackup: { backupName: 'nightly' } } });
    const restoring = clusterStatus(restored, observation({ unreachable: 'connection refused' }));
    expect(restoring.phase).toBe('Restoring');
    expect(condition(restoring, 'Restoring')).toMatchObject({
      status: 'True',
      reason: 'RestoringFromBackup',
    });
    const refused = clusterStatus(
      restored,
      observation({
        unreachable: 'no member pod exists',
        problem: { reason: 'BackupCorrupt', message: 'sha256…' },
      }),
    );
    expect(refused.phase).toBe('Creating');
    expect(condition(refused, 'Restoring')).toMatchObject({ status: 'False', reason: 'BackupCorrupt' });
    expect(condition(refused, 'Degraded')).toMatchObject({ status: 'True', reason: 'BackupCorrupt' });
    const done = clusterStatus(
      cluster({ bootstrap: { fromBackup: { backupName: 'nightly' } } }, { clusterId: 'ff' }),
      observation({ health: health(member(0, { leader: true })), desired: desired(1) }),
    );
    expect(condition(done, 'Restoring')).toMatchObject({ status: 'False', reason: 'Restored' });
  });

  it('stays Restoring, not Running, until no member pod carries the restore any more', () => {
    // Every member a ready voter, but orders-0's pod is still the one that restored it: the
    // operator is about to recreate it, so the restore is not finished and the cluster not Running.
    const restored = cluster({ bootstrap: { fromBackup: { backupName: 'nightly' } } }, { clusterId: 'ff' });
    const whole = health(member(0, { leader: true }), member(1), member(2));
    const finishing = clusterStatus(restored, observation({ health: whole, restoreCarriedBy: ['orders-0'] }));
    expect(finishing.phase).toBe('Restoring');
    expect(condition(finishing, 'Restoring')).toMatchObject({
      status: 'True',
      reason: 'FinishingRestore',
      message: expect.stringContaining('orders-0'),
    });
    const finished = clusterStatus(restored, observation({ health: whole, restoreCarriedBy: [] }));
    expect(finished.phase).toBe('Running');
    expect(condition(finished, 'Restoring')).toMatchObject({ status: 'False', reason: 'Restored' });
  });

  it('counts a member whose pod is gone, being deleted or not Ready as not ready, whatever etcd last answered', () => {
    // The pod of orders-0 was just deleted (a recreation): its etcd may answer a moment longer, but
    // the member is going down, so the cluster is not Running with every member ready.
    const whole = health(member(0, { leader: true }), member(1), member(2));
    const going = clusterStatus(
      cluster({}, { clusterId: 'ff' }),
      observation({ health: whole, podsNotReady: new Map([['orders-0', 'its pod is being deleted']]) }),
    );
    expect(going.members?.find((m) => m.name === 'orders-0')?.ready).toBe(false);
    expect(going.readyMembers).toBe(2);
    expect(going.phase).toBe('Degraded');
    expect(condition(going, 'Degraded')).toMatchObject({
      status: 'True',
      reason: 'MemberUnhealthy',
      message: expect.stringContaining('orders-0'),
    });
  });

  it('is Creating until the first member answers', () => {
    const status = clusterStatus(cluster(), observation({ unreachable: 'connection refused' }));
    expect(status.phase).toBe('Creating');
    expect(status.clusterId).toBeUndefined();
    expect(condition(status, 'Available')).toMatchObject({
      status: 'False',
      reason: 'Creating',
      observedGeneration: 4,
    });
    expect(condition(status, 'Progressing')).toMatchObject({ status: 'True', reason: 'Creating' });
    expect(condition(status, 'QuorumLost')).toMatchObject({ status: 'False', reason: 'NotCreated' });
    expect(status.members).toEqual([
      { name: 'orders-0', ready: false },
      { name: 'orders-1', ready: false },
      { name: 'orders-2', ready: false },
    ]);
  });

  it('is Running with every member, the leader, the oldest version and the cluster ID when converged', () => {
    const status = clusterStatus(
      cluster(),
      observation({
        health: health(member(0, { leader: true }), member(1), member(2)),
        step: { kind: 'converged', unhealthy: [] },
      }),
    );
    expect(status).toMatchObject({
      phase: 'Running',
      clusterId: 'ff',
      memberCount: 3,
      readyMembers: 3,
      leader: 'orders-0',
      currentVersion: '3.6.16',
      selector: 'app.kubernetes.io/name=etcd,app.kubernetes.io/instance=orders',
      clientEndpoint: 'http://orders.shop.svc.cluster.local:2379',
    });
    expect(status.members?.[0]).toEqual({
      name: 'orders-0',
      id: '3e8',
      role: 'Voter',
      ready: true,
      leader: true,
      version: '3.6.16',
      dbSizeBytes: 20480,
      dbSizeInUseBytes: 16384,
    });
    for (const [type, value, reason] of [
      ['Available', 'True', 'QuorumHealthy'],
      ['Progressing', 'False', 'Converged'],
      ['Degraded', 'False', 'AsExpected'],
      ['Scaling', 'False', 'AtSize'],
      ['Upgrading', 'False', 'AtVersion'],
      ['Restoring', 'False', 'NotRestoring'],
      ['QuorumLost', 'False', 'QuorumPresent'],
    ]) {
      expect(condition(status, type ?? ''), type).toMatchObject({ status: value, reason });
    }
  });

  it('says Scaling, and which member the step moved, while a learner joins', () => {
    const status = clusterStatus(
      cluster(),
      observation({
        health: health(member(0, { leader: true }), member(1, { learner: true })),
        step: { kind: 'changed', action: 'promote', member: 'orders-1' },
      }),
    );
    expect(status.phase).toBe('Scaling');
    expect(condition(status, 'Scaling')).toMatchObject({
      status: 'True',
      reason: 'ScalingUp',
      message: '1 voting members, 3 wanted; orders-1 promoted to voter',
    });
    expect(condition(status, 'Progressing')).toMatchObject({ status: 'True', reason: 'PromotingMember' });
    expect(status.members?.map((m) => [m.name, m.role])).toEqual([
      ['orders-0', 'Voter'],
      ['orders-1', 'Learner'],
      ['orders-2', undefined],
    ]);
  });

  it('lists a member nobody wants while it is being removed, and says ScalingDown', () => {
    const status = clusterStatus(
      cluster({ size: 1 }),
      observation({
        desired: desired(1),
        health: health(member(0, { leader: true }), member(1), member(2)),
        step: { kind: 'changed', action: 'remove', member: 'orders-2' },
      }),
    );
    expect(status.members?.map((m) => m.name)).toEqual(['orders-0', 'orders-1', 'orders-2']);
    expect(condition(status, 'Scaling')).toMatchObject({ reason: 'ScalingDown' });
  });

  it('raises QuorumLost with what to do when a majority is down', () => {
    const status = clusterStatus(
      cluster({}, { clusterId: 'ff' }),
      observation({
        health: health(
          member(0, { leader: true }),
          member(1, { healthy: false }),
          member(2, { healthy: false }),
        ),
      }),
    );
    expect(status.phase).toBe('QuorumLost');
    expect(condition(status, 'QuorumLost')).toMatchObject({ status: 'True', reason: 'MajorityUnavailable' });
    expect(condition(status, 'QuorumLost')?.message).toMatch(
      /^1 of 3 voting members are healthy and 2 are needed: etcd refuses every write until a majority is back\. .*restore the newest backup/,
    );
    expect(condition(status, 'Available')).toMatchObject({ status: 'False', reason: 'QuorumLost' });
    expect(status.readyMembers).toBe(1);
  });

  it('raises QuorumLost when no member of a created cluster answers at all', () => {
    const status = clusterStatus(
      cluster({}, { clusterId: 'ff' }),
      observation({ unreachable: 'no member pod exists' }),
    );
    expect(condition(status, 'QuorumLost')).toMatchObject({ status: 'True', reason: 'NoMemberAnswers' });
    expect(condition(status, 'QuorumLost')?.message).toContain('no member answers (no member pod exists)');
  });

  it('says Recovering while a lost quorum is waited out, then Recovering as its phase while restoring, and takes the new cluster ID', () => {
    const lost = { phase: 'Waiting' as const, generation: 0, quorumLostAt: '2026-01-01T00:00:00Z' };
    const waiting = clusterStatus(
      cluster({}, { clusterId: 'aa' }),
      observation({ unreachable: 'no member pod exists', recovery: { ...lost, message: 'restoring at …' } }),
    );
    expect(waiting.phase).toBe('QuorumLost');
    expect(condition(waiting, 'Recovering')).toMatchObject({ status: 'True', reason: 'WaitingForMajority' });
    expect(waiting.recovery?.phase).toBe('Waiting');

    const restoring = { ...lost, phase: 'Restoring' as const, generation: 1, lostClusterId: 'aa' };
    const before = cluster({}, { clusterId: 'aa', recovery: restoring });
    const deleting = clusterStatus(
      before,
      observation({ unreachable: 'no member pod exists', recovery: restoring }),
    );
    expect(deleting.phase).toBe('Recovering');
    expect(deleting.clusterId).toBe('aa');
    // The restored member answers: a new etcd cluster, whose ID replaces the lost one's.
    const answered = clusterStatus(
      before,
      observation({ desired: desired(1), health: health(member(0, { leader: true })), recovery: restoring }),
    );
    expect(answered.clusterId).toBe('ff');
  });

  it('turns a problem into Degraded with its reason, and an unhealthy member into MemberUnhealthy', () => {
    const refused = clusterStatus(
      cluster(),
      observation({ problem: { reason: 'NameTaken', message: 'Service orders exists' } }),
    );
    expect(condition(refused, 'Degraded')).toMatchObject({
      status: 'True',
      reason: 'NameTaken',
      message: 'Service orders exists',
    });
    const sick = clusterStatus(
      cluster(),
      observation({ health: health(member(0, { leader: true }), member(1), member(2, { healthy: false })) }),
    );
    expect(sick.phase).toBe('Degraded');
    expect(condition(sick, 'Degraded')).toMatchObject({
      reason: 'MemberUnhealthy',
      message: 'orders-2 not healthy',
    });
  });

  it('says Upgrading while a member runs another version, and reports the oldest as current', () => {
    const status = clusterStatus(
      cluster(),
      observation({
        health: health(member(0, { leader: true }), member(1, { version: '3.5.21' }), member(2)),
      }),
    );
    expect(status.phase).toBe('Upgrading');
    expect(status.currentVersion).toBe('3.5.21');
    expect(condition(status, 'Upgrading')?.message).toBe('orders-1 runs 3.5.21; 3.6.16 wanted');
    expect(
      oldestVersion([
        { name: 'a', ready: true, version: '3.10.0' },
        { name: 'b', ready: true, version: '3.9.9' },
      ]),
    ).toBe('3.9.9');
  });

  it("records etcd's cluster version, and keeps the last one read while no member answers", () => {
    const seen = clusterStatus(cluster(), observation({ health: health(member(0, { leader: true })) }));
    expect(seen.clusterVersion).toBe('3.6.0');
    const blind = clusterStatus(
      cluster({}, { clusterId: 'ff', clusterVersion: '3.6.0' }),
      observation({ unreachable: 'connection refused' }),
    );
    expect(blind.clusterVersion).toBe('3.6.0');
  });

  it('says RollingBack while members run a newer version than wanted, and not Upgrading when that is refused', () => {
    const rolling = clusterStatus(
      cluster(),
      observation({
        health: health(member(0, { leader: true }), member(1, { version: '3.7.3' }), member(2)),
      }),
    );
    expect(condition(rolling, 'Upgrading')).toMatchObject({
      status: 'True',
      reason: 'RollingBack',
      message: 'orders-1 runs 3.7.3; 3.6.16 wanted',
    });
    const refused = clusterStatus(
      cluster(),
      observation({
        health: health(member(0, { leader: true }), member(1, { version: '3.7.3' }), member(2)),
        problem: { reason: 'DowngradeRefused', message: 'etcd 3.7 cannot go back to 3.6 …' },
      }),
    );
    expect(refused.phase).toBe('Degraded');
    expect(condition(refused, 'Upgrading')).toMatchObject({ status: 'False', reason: 'DowngradeRefused' });
    expect(condition(refused, 'Degraded')).toMatchObject({ status: 'True', reason: 'DowngradeRefused' });
  });

  it('is Paused when spec.paused, still reporting members', () => {
    const status = clusterStatus(
      cluster({ paused: true }, { clusterId: 'ff' }),
      observation({ health: health(member(0, { leader: true }), member(1), member(2)) }),
    );
    expect(status.phase).toBe('Paused');
    expect(condition(status, 'Progressing')).toMatchObject({ status: 'False', reason: 'Paused' });
    expect(status.readyMembers).toBe(3);
  });

  it('moves lastTransitionTime only when a condition changes status (a converged cluster writes nothing)', () => {
    const observed = observation({
      health: health(member(0, { leader: true }), member(1), member(2)),
      step: { kind: 'converged', unhealthy: [] },
    });
    const first = clusterStatus(cluster(), observed, new Date('2026-01-01T00:00:00Z'));
    const second = clusterStatus(cluster({}, first), observed, new Date('2026-01-01T01:00:00Z'));
    expect(second).toEqual(first);
  });

  it("carries only its own conditions: BackupVerified is the drill controller's, never applied again from here", () => {
    const observed = observation({
      health: health(member(0, { leader: true }), member(1), member(2)),
      step: { kind: 'converged', unhealthy: [] },
    });
    const first = clusterStatus(cluster(), observed, new Date('2026-01-01T00:00:00Z'));
    const drilled = {
      ...first,
      conditions: [
        ...(first.conditions ?? []),
        {
          type: 'BackupVerified',
          status: 'True' as const,
          reason: 'BackupRestored',
          message: '',
          lastTransitionTime: '2026-01-01T00:30:00Z',
        },
      ],
    };
    const second = clusterStatus(cluster({}, drilled), observed, new Date('2026-01-01T01:00:00Z'));
    expect(condition(second, 'BackupVerified')).toBeUndefined();
    expect(second).toEqual(first);
  });
});
