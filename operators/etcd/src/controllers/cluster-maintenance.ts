// Upkeep of a settled EtcdCluster, at most one thing per reconcile: recover from a NOSPACE alarm
// (compact, defragment each member, disarm: the engine's documented order), or defragment the one
// member whose database file is most fragmented beyond spec.defragmentation. A member blocks while
// it defragments, so only one goes at a time, followers before the leader, and only while every
// member is a healthy voter of three or more: the others keep quorum meanwhile.
import type { EtcdCluster } from '../api/etcd-cluster-types.ts';
import type { EtcdConnection } from '../connection.ts';
import type { ClusterHealth } from '../health/cluster-health.ts';
import type { MemberHealth } from '../health/member-status.ts';
import { defragmentMember, type DefragmentResult } from '../maintenance/defragment.ts';
import { recoverFromNoSpace, type NoSpaceRecovery } from '../maintenance/nospace-recovery.ts';

export type MaintenanceOutcome =
  | { readonly kind: 'none' }
  | { readonly kind: 'nospace-recovered'; readonly recovery: NoSpaceRecovery }
  | { readonly kind: 'defragmented'; readonly result: DefragmentResult; readonly fragmentation: number };

/** Share of a member's database file that is free pages (0 to 1), or undefined when unknown. */
export function fragmentationOf(member: MemberHealth): number | undefined {
  const size = member.status?.dbSizeBytes;
  const inUse = member.status?.dbSizeInUseBytes;
  if (!size || inUse === undefined) return undefined;
  return Math.max(0, 1 - inUse / size);
}

/** The member to defragment now under `cluster`'s policy, or undefined. */
export function memberToDefragment(cluster: EtcdCluster, health: ClusterHealth): MemberHealth | undefined {
  const { fragmentationPercent, minimumDbSizeMiB } = cluster.spec.defragmentation;
  if (fragmentationPercent === 0) return undefined;
  const voters = health.members.filter((m) => !m.member.isLearner);
  const everyoneHealthy = health.members.every((m) => m.healthy) && health.learners.length === 0;
  if (voters.length < 3 || !everyoneHealthy || !health.hasQuorum) return undefined;
  const candidates = voters
    .map((m) => ({ m, fragmentation: fragmentationOf(m) ?? 0 }))
    .filter(
      ({ m, fragmentation }) =>
        (m.status?.dbSizeBytes ?? 0) >= minimumDbSizeMiB * 1024 * 1024 &&
        fragmentation * 100 >= fragmentationPercent,
    )
    // Followers first; among them the most fragmented.
    .sort((a, b) => Number(a.m.isLeader) - Number(b.m.isLeader) || b.fragmentation - a.fragmentation);
  return candidates[0]?.m;
}

/** Carries out at most one maintenance action on a cluster whose membership has converged. */
export async function maintainCluster(
  cluster: EtcdCluster,
  connection: EtcdConnection,
  health: ClusterHealth,
): Promise<MaintenanceOutcome> {
  if (health.alarms.some((a) => a.alarm.toUpperCase() === 'NOSPACE')) {
    return { kind: 'nospace-recovered', recovery: await recoverFromNoSpace(connection) };
  }
  const member = memberToDefragment(cluster, health);
  if (!member) return { kind: 'none' };
  const fragmentation = fragmentationOf(member) ?? 0;
  return { kind: 'defragmented', result: await defragmentMember(connection, member), fragmentation };
}
