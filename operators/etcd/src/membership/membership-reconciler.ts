import { setTimeout as sleep } from 'node:timers/promises';
import type { EtcdConnection } from '../connection.ts';
import { EtcdEngineError, isTransient, messageOf } from '../errors.ts';
import { readClusterHealth, type ClusterHealth } from '../health/cluster-health.ts';
import type { MemberHealth } from '../health/member-status.ts';
import { describeMember, memberByPeerUrl, normalizeUrl } from './members.ts';
import { addLearner, promoteLearner, removeMember } from './membership-changes.ts';
import { checkPromote, checkRemove, enforce, type RemoveOptions } from './safety.ts';

/** A member the cluster should have: a stable name and the URLs it will listen on. */
export interface DesiredMember {
  readonly name: string;
  readonly peerUrl: string;
  readonly clientUrl: string;
}

/** How a member joins an existing cluster. */
export interface JoinSpec {
  /** `name=peerURL,...` of every member including the new one. */
  readonly initialCluster: string;
  readonly initialClusterState: 'existing';
  /** The ID etcd gave the joining member (decimal uint64): what its data directory will belong to. */
  readonly memberId: string;
}

/** Runs member processes (pods later, local processes in tests). Both calls must be idempotent. */
export interface MemberRuntime {
  /**
   * Makes sure the member's etcd runs with `join`. `fresh` is true when etcd lists the member as
   * never started: its data directory must then be empty (a leftover one belongs to an older identity).
   */
  ensureRunning(member: DesiredMember, join: JoinSpec, fresh: boolean): Promise<void>;
  /** Makes sure the process of a member that left the cluster is stopped. */
  ensureStopped(member: { name: string; peerUrl: string }): Promise<void>;
}

/** What one reconcile step did. At most one membership change happens per step. */
export type StepOutcome =
  | { readonly kind: 'converged'; readonly unhealthy: readonly string[] }
  | {
      readonly kind: 'changed';
      readonly action: 'add-learner' | 'start-member' | 'promote' | 'remove';
      readonly member: string;
    }
  | { readonly kind: 'waiting'; readonly reason: string };

export interface ReconcileOptions extends RemoveOptions {
  readonly runtime: MemberRuntime;
}

function initialClusterFor(health: ClusterHealth, joining: DesiredMember): string {
  const entries = health.members.flatMap((m) =>
    m.member.peerUrls.map((url) => {
      const isJoining = normalizeUrl(url) === normalizeUrl(joining.peerUrl);
      return `${isJoining ? joining.name : m.member.name}=${url}`;
    }),
  );
  return entries.join(',');
}

function isDesired(desired: readonly DesiredMember[], member: MemberHealth): DesiredMember | undefined {
  const urls = member.member.peerUrls.map(normalizeUrl);
  return desired.find((d) => urls.includes(normalizeUrl(d.peerUrl)));
}

/**
 * One level-triggered step towards `desired`: reads the cluster, then makes at most one change
 * (start a learner's process, promote it, remove a member, or add a learner). Safe to call again
 * after a crash at any point; the member list is the only memory it needs.
 */
export async function reconcileMembershipStep(
  connection: EtcdConnection,
  desired: readonly DesiredMember[],
  options: ReconcileOptions,
): Promise<StepOutcome> {
  try {
    return await stepOnce(connection, desired, options);
  } catch (error) {
    if (isTransient(error)) return { kind: 'waiting', reason: messageOf(error) };
    throw error;
  }
}

async function stepOnce(
  connection: EtcdConnection,
  desired: readonly DesiredMember[],
  options: ReconcileOptions,
): Promise<StepOutcome> {
  const health = await readClusterHealth(connection);
  if (!health.hasQuorum) {
    return {
      kind: 'waiting',
      reason: `no quorum (${health.healthyVoters}/${health.votingMembers} voters healthy)`,
    };
  }

  // 1. Finish the learner in flight first: etcd allows only one.
  const learner = health.learners[0];
  if (learner) {
    const wanted = isDesired(desired, learner);
    if (!wanted) {
      await removeMember(connection, learner.member.id, options);
      return { kind: 'changed', action: 'remove', member: describeMember(learner.member) };
    }
    if (!learner.member.started || !learner.reachable) {
      await options.runtime.ensureRunning(
        wanted,
        {
          initialCluster: initialClusterFor(health, wanted),
          initialClusterState: 'existing',
          memberId: learner.member.id,
        },
        !learner.member.started,
      );
      return { kind: 'changed', action: 'start-member', member: wanted.name };
    }
    const verdict = checkPromote(health, learner);
    if (!verdict.ok) {
      if (verdict.reason === 'LearnerNotInSync') return { kind: 'waiting', reason: verdict.message };
      throw new EtcdEngineError('promote learner', verdict.reason, verdict.message, { member: wanted.name });
    }
    await promoteLearner(connection, learner.member.id);
    return { kind: 'changed', action: 'promote', member: wanted.name };
  }

  // 2. Grow: add the first missing member as a learner (its process starts on the next step).
  const members = health.members.map((m) => m.member);
  const missing = desired.find((d) => !memberByPeerUrl(members, d.peerUrl));
  if (missing) {
    await addLearner(connection, missing.peerUrl);
    return { kind: 'changed', action: 'add-learner', member: missing.name };
  }

  // 3. Shrink: remove one voting member nobody wants, unreachable ones and followers first.
  const extra = health.members.filter((m) => !isDesired(desired, m)).sort((a, b) => rank(a) - rank(b))[0];
  if (extra) {
    await removeMember(connection, extra.member.id, options);
    await options.runtime.ensureStopped({
      name: extra.member.name,
      peerUrl: extra.member.peerUrls[0] ?? '',
    });
    return { kind: 'changed', action: 'remove', member: describeMember(extra.member) };
  }

  return {
    kind: 'converged',
    unhealthy: health.members.filter((m) => !m.healthy).map((m) => describeMember(m.member)),
  };
}

function rank(member: MemberHealth): number {
  if (!member.healthy) return 0;
  return member.isLeader ? 2 : 1;
}

/** Repeats reconcile steps until the membership matches `desired`, or fails with the last reason. */
export async function convergeMembership(
  connection: EtcdConnection,
  desired: readonly DesiredMember[],
  options: ReconcileOptions & {
    readonly timeoutMs?: number;
    readonly pollMs?: number;
    onStep?: (o: StepOutcome) => void;
  },
): Promise<StepOutcome[]> {
  const deadline = Date.now() + (options.timeoutMs ?? 120_000);
  const history: StepOutcome[] = [];
  for (;;) {
    const outcome = await reconcileMembershipStep(connection, desired, options);
    history.push(outcome);
    options.onStep?.(outcome);
    if (outcome.kind === 'converged') return history;
    if (Date.now() > deadline) {
      const last = outcome.kind === 'waiting' ? outcome.reason : `${outcome.action} ${outcome.member}`;
      throw new EtcdEngineError(
        'converge membership',
        'Unreachable',
        `not converged in time; last step: ${last}`,
      );
    }
    const pause = outcome.kind === 'waiting' || outcome.action === 'start-member';
    if (pause) await sleep(options.pollMs ?? 250);
  }
}

/**
 * Replaces a member that lost its data: removes it (if still listed) so the next convergence adds it
 * back as a fresh learner with an empty data directory. Whether the removal is safe is checked
 * before its process is stopped: stopping first would take a healthy member away from a cluster
 * that may need it for quorum (another member down), and only then find out.
 */
export async function replaceMember(
  connection: EtcdConnection,
  member: DesiredMember,
  options: ReconcileOptions,
): Promise<{ removed: boolean }> {
  const health = await readClusterHealth(connection);
  const listed = health.members.find((m) =>
    m.member.peerUrls.some((u) => normalizeUrl(u) === normalizeUrl(member.peerUrl)),
  );
  if (listed) enforce(checkRemove(health, listed, options), 'replace member', member.name);
  await options.runtime.ensureStopped({ name: member.name, peerUrl: member.peerUrl });
  if (!listed) return { removed: false };
  return removeMember(connection, listed.member.id, options);
}
