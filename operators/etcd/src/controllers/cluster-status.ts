// Status of an EtcdCluster, computed from what one reconcile observed: etcd's own view of its
// members (through the engine), what the membership step did, and what went wrong.
import { setCondition, type ConditionInput } from '@homeostat/reconcile';
import {
  clusterConditionTypes as types,
  type EtcdCluster,
  type EtcdClusterPhase,
  type EtcdClusterStatusFields,
  type MemberStatusFields,
  type RecoveryStatusFields,
} from '../api/etcd-cluster-types.ts';
import type { ClusterHealth } from '../health/cluster-health.ts';
import type { MemberHealth } from '../health/member-status.ts';
import { memberIdHex } from '../member-id.ts';
import { normalizeUrl } from '../membership/members.ts';
import type { DesiredMember, StepOutcome } from '../membership/membership-reconciler.ts';
import { selectorString, nameOf } from './cluster-names.ts';

/** A problem that needs a person: a condition reason (CamelCase) and a sentence. */
export interface Problem {
  readonly reason: string;
  readonly message: string;
}

export interface ClusterObservation {
  /** The members the spec asks for, with their URLs. */
  readonly desired: readonly DesiredMember[];
  /** etcd's view, or undefined when no member answered (or none was started yet). */
  readonly health: ClusterHealth | undefined;
  /** Why etcd could not be read, when it could not. */
  readonly unreachable?: string | undefined;
  /** What this reconcile's membership step did, if one ran. */
  readonly step?: StepOutcome | undefined;
  /** What keeps the operator from carrying out the spec (a refusal, a write the API server refused). */
  readonly problem?: Problem | undefined;
  readonly clientEndpoint: string;
  readonly clientSecret?: string | undefined;
  /**
   * The operator reads no quorum but the members' side shows one (quorum-evidence.ts): why, in a
   * sentence. QuorumLost is then Unknown, not True.
   */
  readonly operatorCutOff?: string | undefined;
  /** Where a disaster recovery stands (quorum-recovery.ts), if one was ever started. */
  readonly recovery?: RecoveryStatusFields | undefined;
  /**
   * Members whose pods still carry the init containers that restored them from a backup: the
   * operator recreates each once the cluster is whole, and the restore is not finished before.
   */
  readonly restoreCarriedBy?: readonly string[] | undefined;
  /**
   * Desired members whose pod is missing, being deleted or not Ready in the kubelet's eyes, with
   * why. Not ready, whatever etcd last answered: a member whose pod was just deleted may answer a
   * moment longer, but it is going down; one whose new pod is not Ready yet has not been probed.
   */
  readonly podsNotReady?: ReadonlyMap<string, string> | undefined;
}

/** The status members: desired ones first, in order, then any etcd lists that nobody wants. */
export function memberStatuses(observation: ClusterObservation): MemberStatusFields[] {
  const listed = observation.health?.members ?? [];
  const byPeerUrl = (peerUrl: string) =>
    listed.find((m) => m.member.peerUrls.some((u) => normalizeUrl(u) === normalizeUrl(peerUrl)));
  const leaderId = observation.health?.leader?.member.id;
  const podsNotReady = observation.podsNotReady ?? new Map<string, string>();
  const describe = (name: string, health: MemberHealth | undefined): MemberStatusFields => {
    if (!health) return { name, ready: false };
    const status = health.status;
    return {
      name,
      id: memberIdHex(health.member.id),
      role: health.member.isLearner ? 'Learner' : 'Voter',
      ready: health.healthy && !podsNotReady.has(name),
      ...(health.member.id === leaderId ? { leader: true } : {}),
      ...(status
        ? {
            version: status.version,
            dbSizeBytes: status.dbSizeBytes,
            dbSizeInUseBytes: status.dbSizeInUseBytes,
          }
        : {}),
    };
  };
  const wanted = observation.desired.map((d) => describe(d.name, byPeerUrl(d.peerUrl)));
  const unwanted = listed
    .filter((m) => !observation.desired.some((d) => byPeerUrl(d.peerUrl) === m))
    .map((m) => describe(m.member.name || `unstarted-${memberIdHex(m.member.id)}`, m));
  return [...wanted, ...unwanted];
}

/** A major.minor.patch version as one comparable number. */
export function versionRank(version: string): number {
  return version.split('.').reduce((rank, part) => rank * 1000 + Number(part), 0);
}

/** The oldest version any member runs (the cluster's version while an upgrade rolls). */
export function oldestVersion(members: readonly MemberStatusFields[]): string | undefined {
  return members
    .map((m) => m.version)
    .filter((v): v is string => v !== undefined && /^\d+\.\d+\.\d+$/.test(v))
    .sort((a, b) => versionRank(a) - versionRank(b))[0];
}

function stepMessage(step: StepOutcome | undefined): string {
  if (!step) return '';
  if (step.kind === 'waiting') return `waiting: ${step.reason}`;
  if (step.kind === 'converged') return '';
  const what = {
    'add-learner': 'added as a learner',
    'start-member': 'starting',
    promote: 'promoted to voter',
    remove: 'removed',
  }[step.action];
  return `${step.member} ${what}`;
}

interface Facts {
  readonly bootstrapped: boolean;
  readonly quorum: boolean;
  readonly voters: number;
  readonly learners: number;
  readonly size: number;
  readonly paused: boolean;
}

function available(facts: Facts, o: ClusterObservation): ConditionInput {
  const type = types.available;
  const health = o.health;
  if (health?.hasQuorum) {
    const leader = health.leader?.member.name || 'unknown';
    return {
      type,
      status: 'True',
      reason: 'QuorumHealthy',
      message: `${health.healthyVoters} of ${health.votingMembers} voting members healthy, leader ${leader}`,
    };
  }
  if (!facts.bootstrapped) {
    return { type, status: 'False', reason: 'Creating', message: 'the first member is starting' };
  }
  return {
    type,
    status: 'False',
    reason: 'QuorumLost',
    message: health
      ? `${health.healthyVoters} of ${health.votingMembers} voting members healthy, ${health.quorum} needed`
      : `no member answers (${o.unreachable ?? 'no member reachable'})`,
  };
}

function quorumLost(facts: Facts, o: ClusterObservation): ConditionInput {
  const type = types.quorumLost;
  if (!facts.bootstrapped || facts.quorum) {
    return {
      type,
      status: 'False',
      reason: facts.bootstrapped ? 'QuorumPresent' : 'NotCreated',
      message: '',
    };
  }
  if (o.operatorCutOff) {
    return { type, status: 'Unknown', reason: 'MembersUnreachable', message: o.operatorCutOff };
  }
  const health = o.health;
  const what = health
    ? `${health.healthyVoters} of ${health.votingMembers} voting members are healthy and ${health.quorum} are needed`
    : `no member answers (${o.unreachable ?? 'no member reachable'})`;
  return {
    type,
    status: 'True',
    reason: health ? 'MajorityUnavailable' : 'NoMemberAnswers',
    message:
      `${what}: etcd refuses every write until a majority is back. Members whose pods come back with their ` +
      'data restore quorum by themselves; if a majority lost its data, restore the newest backup into a new ' +
      'cluster (see the guide, "Disaster recovery")',
  };
}

function scaling(facts: Facts, o: ClusterObservation): ConditionInput {
  const type = types.scaling;
  if (!facts.bootstrapped || !o.health || (facts.learners === 0 && facts.voters === facts.size)) {
    return { type, status: 'False', reason: 'AtSize', message: '' };
  }
  const up = facts.voters + facts.learners <= facts.size && facts.voters < facts.size;
  const detail = stepMessage(o.step);
  return {
    type,
    status: 'True',
    reason: up ? 'ScalingUp' : 'ScalingDown',
    message: `${facts.voters} voting members, ${facts.size} wanted${detail ? `; ${detail}` : ''}`,
  };
}

/** True while the first member is restored from bootstrap.fromBackup; a refused backup says why. */
function restoring(cluster: EtcdCluster, facts: Facts, o: ClusterObservation): ConditionInput {
  const type = types.restoring;
  if (!cluster.spec.bootstrap?.fromBackup)
    return { type, status: 'False', reason: 'NotRestoring', message: '' };
  const carriers = o.restoreCarriedBy ?? [];
  if (facts.bootstrapped && carriers.length > 0) {
    return {
      type,
      status: 'True',
      reason: 'FinishingRestore',
      message: `${carriers.join(', ')} still run${carriers.length === 1 ? 's' : ''} in the pod that restored ${carriers.length === 1 ? 'it' : 'them'}; it is made again without the restore once every other member is a healthy voter`,
    };
  }
  if (facts.bootstrapped) {
    return { type, status: 'False', reason: 'Restored', message: 'the cluster was created from its backup' };
  }
  if (o.problem) return { type, status: 'False', reason: o.problem.reason, message: o.problem.message };
  return {
    type,
    status: 'True',
    reason: 'RestoringFromBackup',
    message: 'the first member is restored from the verified backup; the others then join as learners',
  };
}

/** True while the operator waits to recover from a lost quorum, or restores from a backup. */
function recovering(o: ClusterObservation): ConditionInput {
  const type = types.recovering;
  const recovery = o.recovery;
  const message = recovery?.message ?? '';
  switch (recovery?.phase) {
    case 'Waiting':
      return { type, status: 'True', reason: 'WaitingForMajority', message };
    case 'Restoring':
      return { type, status: 'True', reason: 'RestoringFromBackup', message };
    case 'Recovered':
      return { type, status: 'False', reason: 'Recovered', message };
    case 'Cancelled':
      return { type, status: 'False', reason: 'MajorityReturned', message };
    case 'Failed':
      return { type, status: 'False', reason: 'NoUsableBackup', message };
    default:
      return { type, status: 'False', reason: 'NotNeeded', message: '' };
  }
}

/** Condition reasons of a change of spec.version the operator does not carry out (version-change.ts). */
const versionRefusals: readonly string[] = ['DowngradeRefused', 'ClusterVersionUnknown'];

function upgrading(
  cluster: EtcdCluster,
  members: readonly MemberStatusFields[],
  o: ClusterObservation,
): ConditionInput {
  const type = types.upgrading;
  const behind = members.filter((m) => m.version !== undefined && m.version !== cluster.spec.version);
  if (behind.length === 0) return { type, status: 'False', reason: 'AtVersion', message: '' };
  if (o.problem && versionRefusals.includes(o.problem.reason)) {
    return { type, status: 'False', reason: o.problem.reason, message: o.problem.message };
  }
  const back = behind.some((m) => versionRank(m.version ?? '') > versionRank(cluster.spec.version));
  return {
    type,
    status: 'True',
    reason: back ? 'RollingBack' : 'RollingUpgrade',
    message: `${behind.map((m) => `${m.name} runs ${m.version ?? '?'}`).join(', ')}; ${cluster.spec.version} wanted`,
  };
}

function progressing(facts: Facts, o: ClusterObservation): ConditionInput {
  const type = types.progressing;
  if (facts.paused) {
    return {
      type,
      status: 'False',
      reason: 'Paused',
      message: 'spec.paused is true: the operator changes nothing',
    };
  }
  if (!facts.bootstrapped) {
    return { type, status: 'True', reason: 'Creating', message: 'starting the first member' };
  }
  const step = o.step;
  if (step && step.kind !== 'converged') {
    const reason =
      step.kind === 'waiting'
        ? 'Waiting'
        : {
            'add-learner': 'AddingMember',
            'start-member': 'StartingMember',
            promote: 'PromotingMember',
            remove: 'RemovingMember',
          }[step.action];
    return { type, status: 'True', reason, message: stepMessage(step) };
  }
  if (!step) {
    return {
      type,
      status: 'Unknown',
      reason: 'NotObserved',
      message: o.unreachable ?? 'membership was not checked',
    };
  }
  return { type, status: 'False', reason: 'Converged', message: `${facts.voters} voting members, as asked` };
}

function degraded(o: ClusterObservation, members: readonly MemberStatusFields[]): ConditionInput {
  const type = types.degraded;
  if (o.problem) return { type, status: 'True', reason: o.problem.reason, message: o.problem.message };
  const alarms = o.health?.alarms ?? [];
  if (alarms.length) {
    return {
      type,
      status: 'True',
      reason: 'Alarm',
      message: `etcd raised ${alarms.map((a) => `${a.alarm} on ${memberIdHex(a.memberId)}`).join(', ')}`,
    };
  }
  const notReady = members.filter((m) => m.id !== undefined && !m.ready);
  if (o.health && notReady.length) {
    return {
      type,
      status: 'True',
      reason: 'MemberUnhealthy',
      message: `${notReady
        .map((m) => {
          const why = o.podsNotReady?.get(m.name);
          return why ? `${m.name} (${why})` : m.name;
        })
        .join(', ')} not healthy`,
    };
  }
  return { type, status: 'False', reason: 'AsExpected', message: '' };
}

function phaseOf(facts: Facts, conditions: Record<string, ConditionInput>): EtcdClusterPhase {
  if (facts.paused) return 'Paused';
  if (conditions[types.restoring]?.status === 'True') return 'Restoring';
  if (conditions[types.recovering]?.reason === 'RestoringFromBackup') return 'Recovering';
  if (!facts.bootstrapped) return 'Creating';
  if (conditions[types.quorumLost]?.status === 'True') return 'QuorumLost';
  if (conditions[types.upgrading]?.status === 'True') return 'Upgrading';
  if (conditions[types.scaling]?.status === 'True') return 'Scaling';
  if (conditions[types.degraded]?.status === 'True') return 'Degraded';
  return 'Running';
}

/** The status to write. `clusterId` (hex) is kept once known: it marks the cluster as created. */
export function clusterStatus(
  cluster: EtcdCluster,
  observation: ClusterObservation,
  now = new Date(),
): EtcdClusterStatusFields {
  const generation = cluster.metadata?.generation;
  const health = observation.health;
  // A recovery from a backup makes a new etcd cluster: its ID replaces the lost one's once it answers.
  const renewed = cluster.status?.recovery?.phase === 'Restoring' && health?.hasQuorum;
  const observedId = health ? memberIdHex(health.clusterId) : undefined;
  const clusterId = (renewed ? observedId : undefined) ?? cluster.status?.clusterId ?? observedId;
  const members = memberStatuses(observation);
  const facts: Facts = {
    bootstrapped: clusterId !== undefined,
    quorum: health?.hasQuorum ?? false,
    voters: health?.votingMembers ?? 0,
    learners: health?.learners.length ?? 0,
    size: cluster.spec.size,
    paused: cluster.spec.paused,
  };
  const inputs: Record<string, ConditionInput> = {};
  for (const input of [
    available(facts, observation),
    progressing(facts, observation),
    degraded(observation, members),
    scaling(facts, observation),
    upgrading(cluster, members, observation),
    restoring(cluster, facts, observation),
    quorumLost(facts, observation),
    recovering(observation),
  ]) {
    inputs[input.type] = input;
  }
  // Only the conditions computed here are carried: another controller's (BackupVerified, written
  // under its own field manager) would otherwise be applied again from a cache that may be behind.
  let conditions = cluster.status?.conditions?.filter((c) => c.type in inputs);
  for (const input of Object.values(inputs)) conditions = setCondition(conditions, input, generation, now);
  const currentVersion = oldestVersion(members);
  // Kept as last read while no member answers: the API server's downgrade rule reads it.
  const clusterVersion = health?.clusterVersion ?? cluster.status?.clusterVersion;
  const leader = members.find((m) => m.leader)?.name;
  return {
    ...(generation === undefined ? {} : { observedGeneration: generation }),
    phase: phaseOf(facts, inputs),
    conditions: conditions ?? [],
    ...(clusterId === undefined ? {} : { clusterId }),
    members,
    memberCount: health?.members.length ?? 0,
    readyMembers: members.filter((m) => m.ready).length,
    selector: selectorString(nameOf(cluster)),
    ...(currentVersion ? { currentVersion } : {}),
    ...(clusterVersion ? { clusterVersion } : {}),
    ...(leader ? { leader } : {}),
    clientEndpoint: observation.clientEndpoint,
    ...(observation.clientSecret ? { clientSecret: observation.clientSecret } : {}),
    ...(observation.recovery ? { recovery: observation.recovery } : {}),
  };
}
