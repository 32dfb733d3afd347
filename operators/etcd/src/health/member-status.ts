import { withMemberClient, type EtcdConnection } from '../connection.ts';
import { messageOf } from '../errors.ts';
import { isNoMember } from '../member-id.ts';
import type { EtcdMember } from '../membership/members.ts';

/** What one member says about itself through the Maintenance Status call. */
export interface MemberStatus {
  readonly leaderId: string;
  readonly raftTerm: string;
  readonly raftIndex: string;
  readonly raftAppliedIndex: string;
  readonly dbSizeBytes: number;
  readonly dbSizeInUseBytes: number;
  readonly version: string;
  readonly isLearner: boolean;
  /** Alarm and health messages the member reports, e.g. "NOSPACE". */
  readonly errors: readonly string[];
}

/** A member of the list together with its status, or why its status could not be read. */
export interface MemberHealth {
  readonly member: EtcdMember;
  readonly status: MemberStatus | undefined;
  readonly error: string | undefined;
  readonly reachable: boolean;
  /** Reachable and following a known leader. */
  readonly healthy: boolean;
  readonly isLeader: boolean;
  /** Alarms raised for this member (NOSPACE, CORRUPT). */
  readonly alarms: readonly string[];
}

/** Reads one member's status over a client bound to that member only. */
export async function readMemberStatus(connection: EtcdConnection, clientUrl: string): Promise<MemberStatus> {
  return withMemberClient(connection, clientUrl, async (client) => {
    const status = await client.maintenance.status();
    return {
      leaderId: status.leader,
      raftTerm: status.raftTerm,
      raftIndex: status.raftIndex,
      raftAppliedIndex: status.raftAppliedIndex,
      dbSizeBytes: Number(status.dbSize),
      dbSizeInUseBytes: Number(status.dbSizeInUse),
      version: status.version,
      isLearner: status.isLearner,
      errors: status.errors,
    };
  });
}

/** Status of a listed member, never throwing: an unreachable member is a fact, not a failure. */
export async function probeMember(
  connection: EtcdConnection,
  member: EtcdMember,
  alarms: readonly string[],
): Promise<MemberHealth> {
  const clientUrl = member.clientUrls[0];
  if (!clientUrl) {
    return {
      member,
      status: undefined,
      error: 'the member has not started (no client URL)',
      reachable: false,
      healthy: false,
      isLeader: false,
      alarms,
    };
  }
  try {
    const status = await readMemberStatus(connection, clientUrl);
    return {
      member,
      status,
      error: undefined,
      reachable: true,
      healthy: !isNoMember(status.leaderId),
      isLeader: status.leaderId === member.id,
      alarms,
    };
  } catch (error) {
    return {
      member,
      status: undefined,
      error: messageOf(error),
      reachable: false,
      healthy: false,
      isLeader: false,
      alarms,
    };
  }
}
