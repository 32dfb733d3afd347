import { EtcdEngineError, type EtcdEngineReason } from '../errors.ts';
import { quorumOf, type ClusterHealth } from '../health/cluster-health.ts';
import type { MemberHealth } from '../health/member-status.ts';
import { describeMember } from './members.ts';

/** The answer of a safety check: go, or a refusal with a reason code and a sentence for humans. */
export type Verdict =
  { readonly ok: true } | { readonly ok: false; readonly reason: EtcdEngineReason; readonly message: string };

const go: Verdict = { ok: true };
const refuse = (reason: EtcdEngineReason, message: string): Verdict => ({ ok: false, reason, message });

/** Throws the refusal of a verdict as an engine error. */
export function enforce(verdict: Verdict, step: string, member?: string): void {
  if (!verdict.ok) {
    throw new EtcdEngineError(step, verdict.reason, verdict.message, member ? { member } : {});
  }
}

function noQuorum(health: ClusterHealth): Verdict {
  return refuse(
    'NoQuorum',
    `the cluster has no quorum (${health.healthyVoters} of ${health.votingMembers} voting members healthy, ` +
      `${health.quorum} needed); membership cannot change until it does`,
  );
}

/** May a learner with `peerUrl` be added? One learner at a time, and only with quorum. */
export function checkAddLearner(health: ClusterHealth, peerUrl: string): Verdict {
  if (!health.hasQuorum) return noQuorum(health);
  const learner = health.learners[0];
  if (learner) {
    return refuse(
      'LearnerAlreadyExists',
      `learner ${describeMember(learner.member)} is still waiting for promotion; etcd allows one learner at a ` +
        `time, so ${peerUrl} can be added only after it is promoted or removed`,
    );
  }
  return go;
}

/** A learner is in sync when it has applied at least 90% of the leader's log (etcd's own promotion rule). */
export function learnerInSync(learner: MemberHealth, leader: MemberHealth): boolean {
  const learnerApplied = BigInt(learner.status?.raftAppliedIndex ?? '0');
  const leaderIndex = BigInt(leader.status?.raftIndex ?? '0');
  return learnerApplied * 10n >= leaderIndex * 9n;
}

/** May learner `learner` become a voting member? It must run, be in sync, and the bigger cluster keep quorum. */
export function checkPromote(health: ClusterHealth, learner: MemberHealth): Verdict {
  if (!health.hasQuorum || !health.leader) return noQuorum(health);
  const name = describeMember(learner.member);
  if (!learner.member.started || !learner.reachable) {
    return refuse(
      'LearnerNotStarted',
      `learner ${name} is not running or not reachable (${learner.error ?? 'no status'})`,
    );
  }
  if (!learnerInSync(learner, health.leader)) {
    return refuse(
      'LearnerNotInSync',
      `learner ${name} has applied raft index ${learner.status?.raftAppliedIndex ?? '?'} of the leader's ` +
        `${health.leader.status?.raftIndex ?? '?'}; it is promoted once it has caught up`,
    );
  }
  const votersAfter = health.votingMembers + 1;
  if (health.healthyVoters + 1 < quorumOf(votersAfter)) {
    return refuse(
      'WouldLoseQuorum',
      `promoting ${name} makes ${votersAfter} voting members with ${health.healthyVoters + 1} healthy, ` +
        `below the quorum of ${quorumOf(votersAfter)}`,
    );
  }
  return go;
}

export interface RemoveOptions {
  /**
   * Removing a member of a two-member cluster is unsafe (etcd's runtime reconfiguration guide): the
   * majority of two is two, so a failure during the removal stops the cluster. It is the only way from
   * two members to one, so it is allowed only when asked for and only when both members are healthy.
   */
  readonly allowTwoMemberRemoval?: boolean;
}

/** May `target` be removed? Never the last voter, never below quorum, two-member removal only on request. */
export function checkRemove(
  health: ClusterHealth,
  target: MemberHealth,
  options: RemoveOptions = {},
): Verdict {
  if (!health.hasQuorum) return noQuorum(health);
  const name = describeMember(target.member);
  if (target.member.isLearner) return go;
  const voters = health.votingMembers;
  if (voters <= 1) {
    return refuse(
      'WouldLoseQuorum',
      `${name} is the only voting member; removing it would destroy the cluster`,
    );
  }
  if (voters === 2) {
    if (!options.allowTwoMemberRemoval) {
      return refuse(
        'TwoMemberRemoval',
        `removing ${name} from a two-member cluster is unsafe: the majority of two is two, so a failure ` +
          'during the removal stops the cluster; pass allowTwoMemberRemoval to accept that risk',
      );
    }
    if (health.healthyVoters < 2) {
      return refuse(
        'WouldLoseQuorum',
        `removing ${name} from a two-member cluster needs both members healthy (only ${health.healthyVoters} is)`,
      );
    }
  }
  const votersAfter = voters - 1;
  const healthyAfter = health.healthyVoters - (target.healthy ? 1 : 0);
  if (healthyAfter < quorumOf(votersAfter)) {
    return refuse(
      'WouldLoseQuorum',
      `removing ${name} leaves ${healthyAfter} healthy of ${votersAfter} voting members, below the quorum ` +
        `of ${quorumOf(votersAfter)}; bring the unhealthy members back first`,
    );
  }
  return go;
}
