import { withMemberClient, type EtcdConnection } from '../connection.ts';
import { EtcdEngineError, messageOf } from '../errors.ts';
import { readClusterHealth } from '../health/cluster-health.ts';
import { readMemberStatus, type MemberHealth } from '../health/member-status.ts';
import { describeMember } from '../membership/members.ts';

/** One member's defragmentation: database size before and after. */
export interface DefragmentResult {
  readonly member: string;
  readonly dbSizeBefore: number;
  readonly dbSizeAfter: number;
}

export interface DefragmentOptions {
  /** Deadline of one member's defragmentation (it rewrites the whole database). Default 5 minutes. */
  readonly timeoutMs?: number;
}

/**
 * Defragments every reachable member, one at a time, followers first and the leader last: a member
 * is blocked while it defragments, so doing two at once could stall quorum. A member is only started
 * once the previous one answers its status again.
 */
export async function defragmentMembers(
  connection: EtcdConnection,
  options: DefragmentOptions = {},
): Promise<DefragmentResult[]> {
  const health = await readClusterHealth(connection);
  if (!health.hasQuorum) {
    throw new EtcdEngineError(
      'defragment',
      'NoQuorum',
      'the cluster has no quorum; defragmenting now could keep it down',
    );
  }
  const order = health.members
    .filter((m) => m.reachable && m.member.clientUrls.length > 0)
    .sort((a, b) => Number(a.isLeader) - Number(b.isLeader));
  const results: DefragmentResult[] = [];
  for (const m of order) results.push(await defragmentMember(connection, m, options));
  return results;
}

/**
 * Defragments one member (blocking it meanwhile) and reads its size again. The caller decides that
 * the rest of the cluster keeps quorum without it.
 */
export async function defragmentMember(
  connection: EtcdConnection,
  m: MemberHealth,
  options: DefragmentOptions = {},
): Promise<DefragmentResult> {
  const url = m.member.clientUrls[0] ?? '';
  const name = describeMember(m.member);
  try {
    await withMemberClient(connection, url, (client) =>
      client.maintenance.defragment({ deadline: Date.now() + (options.timeoutMs ?? 300_000) }),
    );
    const after = await readMemberStatus(connection, url);
    return { member: name, dbSizeBefore: m.status?.dbSizeBytes ?? 0, dbSizeAfter: after.dbSizeBytes };
  } catch (error) {
    throw new EtcdEngineError('defragment', 'MaintenanceFailed', messageOf(error), {
      member: name,
      cause: error,
    });
  }
}
