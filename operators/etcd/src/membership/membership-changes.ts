import { withMemberClient, type EtcdConnection } from '../connection.ts';
import { EtcdEngineError, messageOf, type EtcdEngineReason } from '../errors.ts';
import { readClusterHealth, type ClusterHealth } from '../health/cluster-health.ts';
import type { MemberHealth } from '../health/member-status.ts';
import { memberIdHex } from '../member-id.ts';
import { describeMember, listMembers, memberByPeerUrl, type EtcdMember } from './members.ts';
import { checkAddLearner, checkPromote, checkRemove, enforce, type RemoveOptions } from './safety.ts';
import { settlingRefusals, type SettlingRefusals } from './settling-refusals.ts';

// Every change here: reads the member list first (so a retry after a crash is a no-op), checks that
// it is safe, sends exactly one request to the leader with retries off, and, if the answer is lost,
// reads the list again instead of resending. (An add the leader keeps refusing may move leadership
// after the refusal: leadershipOffStaleView.)

/** etcd's membership error messages, mapped to the engine's reasons. */
const etcdRefusals: readonly [RegExp, EtcdEngineReason][] = [
  [/too many learner members/i, 'LearnerAlreadyExists'],
  [/can only promote a learner member which is in sync/i, 'LearnerNotInSync'],
  [/not enough started members/i, 'WouldLoseQuorum'],
  [/unhealthy cluster/i, 'ClusterSettling'],
  [/peer urls? already exists/i, 'PeerUrlConflict'],
  [/member not found/i, 'MemberNotFound'],
];

function toEngineError(step: string, error: unknown, member?: string): EtcdEngineError {
  if (error instanceof EtcdEngineError) return error;
  const message = messageOf(error);
  const reason = etcdRefusals.find(([pattern]) => pattern.test(message))?.[1] ?? 'Unreachable';
  return new EtcdEngineError(step, reason, `etcd answered: ${message}`, {
    ...(member ? { member } : {}),
    cause: error,
  });
}

function leaderUrl(health: ClusterHealth, step: string): string {
  const url = health.leader?.member.clientUrls[0];
  if (!url) throw new EtcdEngineError(step, 'NoQuorum', 'no leader is known, so no change can be committed');
  return url;
}

function findMember(health: ClusterHealth, id: string): MemberHealth | undefined {
  return health.members.find((m) => m.member.id === id);
}

/** Result of an idempotent add: the member, and whether this call created it. */
export interface AddLearnerResult {
  readonly member: EtcdMember;
  readonly added: boolean;
}

export interface AddLearnerOptions {
  /** Memory of "unhealthy cluster" refusals (settling-refusals.ts); the process-wide one by default. */
  readonly refusals?: SettlingRefusals;
}

/**
 * Adds a learner for `peerUrl` unless a member with that peer URL exists already (then returns it).
 * A leader that keeps refusing as "unhealthy cluster" while every voter answers loses leadership
 * (see leadershipOffStaleView); the refusal is still thrown, and the next reconcile adds.
 */
export async function addLearner(
  connection: EtcdConnection,
  peerUrl: string,
  options: AddLearnerOptions = {},
): Promise<AddLearnerResult> {
  const step = 'add learner';
  const refusals = options.refusals ?? settlingRefusals;
  const health = await readClusterHealth(connection);
  // A voter that does not answer (say, restarting): the leader's refusals are right until its
  // streams are back and have counted for etcd's HealthInterval, so the patience starts again.
  if (health.healthyVoters < health.votingMembers) refusals.voterSilent(health.clusterId);
  const existing = memberByPeerUrl(
    health.members.map((m) => m.member),
    peerUrl,
  );
  if (existing) return { member: existing, added: false };
  enforce(checkAddLearner(health, peerUrl), step, peerUrl);
  const url = leaderUrl(health, step);
  try {
    const response = await withMemberClient(connection, url, (client) =>
      client.cluster.memberAdd({ peerURLs: [peerUrl], isLearner: true }),
    );
    const added = response.member;
    refusals.settled(health.clusterId);
    return {
      member: {
        id: added.ID,
        name: added.name,
        peerUrls: added.peerURLs,
        clientUrls: added.clientURLs,
        isLearner: added.isLearner,
        started: added.name !== '',
      },
      added: true,
    };
  } catch (error) {
    // The request may have been applied even though the answer was lost: look before anyone resends.
    const after = await withMemberClient(connection, url, (c) => listMembers(c)).catch(() => undefined);
    const appeared = after && memberByPeerUrl(after, peerUrl);
    if (appeared) {
      refusals.settled(health.clusterId);
      return { member: appeared, added: true };
    }
    const refusal = toEngineError(step, error, peerUrl);
    if (refusal.reason !== 'ClusterSettling') throw refusal;
    throw await leadershipOffStaleView(connection, health, refusal, refusals);
  }
}

/**
 * Answers an add the leader refused as "unhealthy cluster". etcd checks that the member receiving
 * the add has seen a quorum of voters active for 5 s, in its own rafthttp transport; a pipeline send
 * that failed after a peer's streams had come back leaves that peer inactive there while its streams
 * stay up, and the refusal never ends (docs/adr/0312-etcd-leadership-moved-off-a-stale-peer-view.md).
 * When every voter answers the operator, and this leader has refused for the settling patience, the
 * leader's view is the stale one: leadership moves to another voter, whose view is its own, and the
 * next reconcile sends the add there. A refusal while a voter does not answer is etcd being right.
 * Returns the error to throw: the refusal, or a ClusterSettling error saying leadership moved.
 */
async function leadershipOffStaleView(
  connection: EtcdConnection,
  health: ClusterHealth,
  refusal: EtcdEngineError,
  refusals: SettlingRefusals,
): Promise<EtcdEngineError> {
  const leader = health.leader;
  if (!leader || health.healthyVoters < health.votingMembers) return refusal;
  const verdict = refusals.refused(health.clusterId, leader.member.id);
  if (!verdict.moveLeadership) return refusal;
  const from = describeMember(leader.member);
  const successor = await handOverLeadership(connection, health, leader, {
    step: 'move leadership off a leader that refuses adds',
    // Never back to a leader that refused before in this run (its view is as stale as it was), so
    // the moves end after voters-1: `only`, since `prefer` would fall back to such a leader.
    only: (m) => !verdict.movedFrom.has(m.member.id),
  });
  if (!successor) return refusal;
  refusals.movedAway(health.clusterId, leader.member.id);
  const seconds = Math.round(verdict.refusingForMs / 1000);
  return new EtcdEngineError(
    refusal.step,
    'ClusterSettling',
    `${from} refused adds as "unhealthy cluster" for ${seconds} s while every voter answered (its own ` +
      `view of a peer is stale); leadership moved to ${describeMember(successor.member)}, the add ` +
      `is retried there`,
    { ...(refusal.member ? { member: refusal.member } : {}), cause: refusal },
  );
}

/** Promotes learner `id` to a voting member; a member that already votes is left as it is. */
export async function promoteLearner(connection: EtcdConnection, id: string): Promise<{ promoted: boolean }> {
  const step = 'promote learner';
  const health = await readClusterHealth(connection);
  const learner = findMember(health, id);
  if (!learner) {
    throw new EtcdEngineError(step, 'MemberNotFound', `no member with ID ${memberIdHex(id)}`, { member: id });
  }
  if (!learner.member.isLearner) return { promoted: false };
  const name = describeMember(learner.member);
  enforce(checkPromote(health, learner), step, name);
  const url = leaderUrl(health, step);
  try {
    await withMemberClient(connection, url, (client) => client.cluster.memberPromote({ ID: id }));
    return { promoted: true };
  } catch (error) {
    const after = await withMemberClient(connection, url, (c) => listMembers(c)).catch(() => undefined);
    if (after?.some((m) => m.id === id && !m.isLearner)) return { promoted: true };
    throw toEngineError(step, error, name);
  }
}

/** Removes member `id`; a member that is already gone is not an error (the removal happened before). */
export async function removeMember(
  connection: EtcdConnection,
  id: string,
  options: RemoveOptions = {},
): Promise<{ removed: boolean }> {
  const step = 'remove member';
  const health = await readClusterHealth(connection);
  const target = findMember(health, id);
  if (!target) return { removed: false };
  const name = describeMember(target.member);
  enforce(checkRemove(health, target, options), step, name);
  if (target.isLeader) await handOverLeadership(connection, health, target);
  const remaining = health.members.filter((m) => m.member.id !== id && m.healthy && !m.member.isLearner);
  // Send the removal through a member that stays, so the answer does not die with the removed member.
  const urls = remaining.map((m) => m.member.clientUrls[0]).filter((u): u is string => Boolean(u));
  const url = urls[0] ?? leaderUrl(health, step);
  try {
    await withMemberClient(connection, url, (client) => client.cluster.memberRemove({ ID: id }));
    return { removed: true };
  } catch (error) {
    const after = await withMemberClient(connection, url, (c) => listMembers(c)).catch(() => undefined);
    if (after && !after.some((m) => m.id === id)) return { removed: true };
    throw toEngineError(step, error, name);
  }
}

/** How handOverLeadership picks the new leader among the other healthy voters. */
export interface HandOverOptions {
  readonly step?: string;
  /** Voters to choose among if any of them qualifies; otherwise any other healthy voter. */
  readonly prefer?: (member: MemberHealth) => boolean;
  /** The only voters that may lead: none qualifying, leadership stays where it is. */
  readonly only?: (member: MemberHealth) => boolean;
}

/**
 * Moves leadership from `leader` to the healthiest other voter (among those `prefer` accepts, if
 * any does) before the leader goes away (removed, or restarted by an upgrade): losing the leader
 * works, but costs an election during which nothing commits, held with one member fewer. Returns
 * the new leader, or undefined when there is no other healthy voter (that `only` accepts).
 */
export async function handOverLeadership(
  connection: EtcdConnection,
  health: ClusterHealth,
  leader: MemberHealth,
  options: HandOverOptions = {},
): Promise<MemberHealth | undefined> {
  const { only = () => true } = options;
  const voters = health.members.filter(
    (m) => m.healthy && !m.member.isLearner && m.member.id !== leader.member.id && only(m),
  );
  const preferred = options.prefer ? voters.filter(options.prefer) : [];
  const successor = (preferred.length ? preferred : voters).sort((a, b) =>
    Number(BigInt(b.status?.raftAppliedIndex ?? '0') - BigInt(a.status?.raftAppliedIndex ?? '0')),
  )[0];
  const url = leader.member.clientUrls[0];
  if (!successor || !url) return undefined;
  try {
    await withMemberClient(connection, url, (client) =>
      client.maintenance.moveLeader({ targetID: successor.member.id }),
    );
  } catch (error) {
    throw toEngineError(
      options.step ?? 'move leadership before removal',
      error,
      describeMember(leader.member),
    );
  }
  return successor;
}
