// Whether quorum is lost as the members' side shows it, not as the operator's connection does.
// A disaster recovery deletes every member and restores a backup (ADR 0303), so it may start only
// on evidence from the members (ADR 0305): what they answer (a member that follows a leader says a
// majority elected one) and what the kubelet reports of their pods (a member pod is Ready only
// while etcd's /readyz passes, which needs a leader). The operator failing to connect (a
// NetworkPolicy, DNS, a client certificate that no longer matches, its own node cut off) is
// blindness, not evidence: then a majority of Ready pods keeps the cluster as it is.
import type { V1Pod } from '@kubernetes/client-node';
import type { EtcdCluster } from '../api/etcd-cluster-types.ts';
import { isPodReady } from '@homeostat/reconcile';
import { quorumOf, type ClusterHealth } from '../health/cluster-health.ts';
import { isNoMember } from '../member-id.ts';
import { memberLabel } from './cluster-names.ts';

export interface QuorumEvidence {
  /** The members' side shows no majority: a recovery may count the cluster as lost. */
  readonly lost: boolean;
  /**
   * The operator reads no quorum but the members' side shows one (a sentence saying so): the
   * operator is cut off, not the cluster; nothing is deleted or restored.
   */
  readonly operatorCutOff?: string;
}

/** What the members' side says about quorum, given etcd's view (if any) and the member pods. */
export function quorumEvidence(
  cluster: EtcdCluster,
  health: ClusterHealth | undefined,
  pods: readonly V1Pod[],
): QuorumEvidence {
  if (!cluster.status?.clusterId || health?.hasQuorum) return { lost: false };
  const followers = (health?.members ?? []).filter((m) => m.status && !isNoMember(m.status.leaderId));
  const memberPods = pods.filter((p) => p.metadata?.labels?.[memberLabel]);
  // etcd's member list when a member answered; otherwise the most members the cluster may have.
  const voters = health?.votingMembers ?? Math.max(cluster.spec.size, memberPods.length);
  const ready = memberPods.filter(isPodReady).map((p) => p.metadata?.name ?? '');
  const seen = health
    ? `the operator reads ${health.healthyVoters} of ${health.votingMembers} voting members healthy`
    : 'the operator reaches no member';
  if (followers.length > 0) {
    const names = followers.map((m) => m.member.name).join(', ');
    return {
      lost: false,
      operatorCutOff: `${seen}, but ${names} follow${followers.length === 1 ? 's' : ''} a leader: a majority elected one, so quorum is not lost and nothing is restored`,
    };
  }
  if (ready.length >= quorumOf(voters)) {
    return {
      lost: false,
      operatorCutOff: `${seen}, but the kubelet reports ${ready.length} of ${voters} member pods Ready (${ready.join(', ')}), which they are only with a leader: quorum is not lost and nothing is restored; check what keeps the operator from the members (NetworkPolicy, DNS, the client certificate)`,
    };
  }
  return { lost: true };
}
