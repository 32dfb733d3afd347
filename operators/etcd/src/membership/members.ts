import type { Etcd3, IMember } from 'etcd3';

/** One etcd member as the member list reports it. IDs stay decimal strings (uint64). */
export interface EtcdMember {
  readonly id: string;
  /** Empty until the member has started and published its name. */
  readonly name: string;
  readonly peerUrls: readonly string[];
  readonly clientUrls: readonly string[];
  readonly isLearner: boolean;
  /** False for a member that was added but has not joined yet. */
  readonly started: boolean;
}

function toMember(member: IMember): EtcdMember {
  return {
    id: member.ID,
    name: member.name,
    peerUrls: member.peerURLs,
    clientUrls: member.clientURLs,
    isLearner: member.isLearner,
    started: member.name !== '',
  };
}

/**
 * The member list. Linearizable by default: after a crash the engine must see every change already
 * committed, or it could add the same member twice.
 */
export async function listMembers(client: Etcd3, linearizable = true): Promise<EtcdMember[]> {
  return (await listMembersOfCluster(client, linearizable)).members;
}

/** The member list with the ID of the cluster that answered (decimal uint64). */
export async function listMembersOfCluster(
  client: Etcd3,
  linearizable = true,
): Promise<{ clusterId: string; members: EtcdMember[] }> {
  const response = await client.cluster.memberList({ linearizable });
  return { clusterId: response.header.cluster_id, members: response.members.map(toMember) };
}

/** The member that owns `peerUrl`, if any. */
export function memberByPeerUrl(members: readonly EtcdMember[], peerUrl: string): EtcdMember | undefined {
  const wanted = normalizeUrl(peerUrl);
  return members.find((m) => m.peerUrls.some((url) => normalizeUrl(url) === wanted));
}

/** URLs compare without a trailing slash and with a lower-case scheme and host. */
export function normalizeUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname === '/' ? '' : parsed.pathname}`;
  } catch {
    return url;
  }
}

/** How a member is named in messages: its name when started, else its ID and peer URL. */
export function describeMember(member: EtcdMember): string {
  return member.name || `${member.id} (${member.peerUrls.join(',') || 'no peer URL'}, not started)`;
}
