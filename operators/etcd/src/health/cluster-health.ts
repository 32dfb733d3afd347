import type { Etcd3 } from 'etcd3';
import { withMemberClient, type EtcdConnection } from '../connection.ts';
import { EtcdEngineError, messageOf } from '../errors.ts';
import { listMembersOfCluster, type EtcdMember } from '../membership/members.ts';
import { readClusterVersion } from './cluster-version.ts';
import { probeMember, type MemberHealth } from './member-status.ts';

/** An alarm raised in the cluster: which member, which alarm (NOSPACE, CORRUPT). */
export interface RaisedAlarm {
  readonly memberId: string;
  readonly alarm: string;
}

/** Overall state: Healthy (all good), Degraded (quorum, but a member down or an alarm), Unavailable (no quorum). */
export type ClusterState = 'Healthy' | 'Degraded' | 'Unavailable';

/** The whole cluster as seen right now, computed from each member's own status. */
export interface ClusterHealth {
  readonly members: readonly MemberHealth[];
  readonly votingMembers: number;
  readonly healthyVoters: number;
  /** Voting members needed for a majority. */
  readonly quorum: number;
  readonly hasQuorum: boolean;
  /** The leader most healthy voters agree on, if any. */
  readonly leader: MemberHealth | undefined;
  readonly learners: readonly MemberHealth[];
  readonly alarms: readonly RaisedAlarm[];
  readonly state: ClusterState;
  /** Whether the member list came from a linearizable read (false: read from one member, may be stale). */
  readonly linearizableList: boolean;
  /** The etcd cluster ID (decimal uint64) of the member that answered the member list. */
  readonly clusterId: string;
  /**
   * etcd's cluster version (e.g. 3.6.0), as the leader (or else any member) reports it; undefined
   * while no member answers with one.
   */
  readonly clusterVersion: string | undefined;
}

/** Majority of `voters`. */
export function quorumOf(voters: number): number {
  return Math.floor(voters / 2) + 1;
}

/** Asks each endpoint in turn until one answers; a dead member must not hide the others. */
export async function askAnyEndpoint<T>(
  connection: EtcdConnection,
  step: string,
  ask: (client: Etcd3) => Promise<T>,
): Promise<T> {
  const failures: string[] = [];
  for (const endpoint of connection.endpoints) {
    try {
      return await withMemberClient(connection, endpoint, ask);
    } catch (error) {
      failures.push(`${endpoint}: ${messageOf(error)}`);
    }
  }
  throw new EtcdEngineError(step, 'Unreachable', `no endpoint answered (${failures.join('; ')})`);
}

async function readAlarms(connection: EtcdConnection): Promise<RaisedAlarm[]> {
  try {
    const response = await askAnyEndpoint(connection, 'read alarms', (client) =>
      client.maintenance.alarm({ action: 'Get', memberID: 0, alarm: 'None' }),
    );
    return response.alarms.map((a) => ({ memberId: a.memberID, alarm: String(a.alarm).toUpperCase() }));
  } catch {
    return []; // alarms are read through raft; without quorum the member statuses still say enough
  }
}

async function readMemberList(
  connection: EtcdConnection,
): Promise<{ members: EtcdMember[]; linearizable: boolean; clusterId: string }> {
  try {
    const list = await askAnyEndpoint(connection, 'list members', (c) => listMembersOfCluster(c));
    return { ...list, linearizable: true };
  } catch {
    // Without quorum a linearizable read fails; one member's local view still lets us report state.
    const list = await askAnyEndpoint(connection, 'list members (serializable)', (c) =>
      listMembersOfCluster(c, false),
    );
    return { ...list, linearizable: false };
  }
}

/** Health of every member and of the cluster: leader, quorum, alarms, learners. */
export async function readClusterHealth(connection: EtcdConnection): Promise<ClusterHealth> {
  const { members, linearizable, clusterId } = await readMemberList(connection);
  // Alarms are read through raft too: once the linearizable list has found no quorum, asking for
  // them would only wait out the call timeout a second time, at every look while quorum is lost
  // (and a disaster recovery takes one step per look).
  const alarms = linearizable ? await readAlarms(connection) : [];
  const healths = await Promise.all(
    members.map((m) =>
      probeMember(
        connection,
        m,
        alarms.filter((a) => a.memberId === m.id).map((a) => a.alarm),
      ),
    ),
  );
  const voters = healths.filter((h) => !h.member.isLearner);
  const healthyVoters = voters.filter((h) => h.healthy);
  const quorum = quorumOf(voters.length);
  const hasQuorum = healthyVoters.length >= quorum;
  const votes = new Map<string, number>();
  for (const h of healthyVoters) {
    const leaderId = h.status?.leaderId ?? '';
    votes.set(leaderId, (votes.get(leaderId) ?? 0) + 1);
  }
  const [leaderId, leaderVotes] = [...votes.entries()].sort((a, b) => b[1] - a[1])[0] ?? ['', 0];
  const leader = leaderVotes >= quorum ? healths.find((h) => h.member.id === leaderId) : undefined;
  const everyoneWell = healths.every((h) => h.healthy) && alarms.length === 0;
  const reachable = healths
    .filter((h) => h.reachable)
    .sort((a, b) => Number(b === leader) - Number(a === leader));
  const clusterVersion = await readClusterVersion(
    connection,
    reachable.flatMap((h) => h.member.clientUrls.slice(0, 1)),
  );
  return {
    members: healths,
    votingMembers: voters.length,
    healthyVoters: healthyVoters.length,
    quorum,
    hasQuorum: hasQuorum && leader !== undefined,
    leader,
    learners: healths.filter((h) => h.member.isLearner),
    alarms,
    state: !hasQuorum || !leader ? 'Unavailable' : everyoneWell ? 'Healthy' : 'Degraded',
    linearizableList: linearizable,
    clusterId,
    clusterVersion,
  };
}
