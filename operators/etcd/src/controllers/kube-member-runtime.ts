// The engine's MemberRuntime on Kubernetes: a member runs as its pod with its claim (ADR 0301).
// Every call is idempotent: it looks at the cached objects and makes or deletes at most what is
// missing or stale, so the engine may call it again after a crash at any point.
import type { V1ObjectMeta, V1Pod } from '@kubernetes/client-node';
import { builtin, type EventRecorder, type KubeClient } from '@homeostat/reconcile';
import type { EtcdCluster } from '../api/etcd-cluster-types.ts';
import { memberIdHex } from '../member-id.ts';
import { normalizeUrl } from '../membership/members.ts';
import type { DesiredMember, JoinSpec, MemberRuntime } from '../membership/membership-reconciler.ts';
import { claimName, memberIdAnnotation, namespaceOf, tlsSecretNames } from './cluster-names.ts';
import { peerCommonName } from './cluster-tls.ts';
import { claimMemberId, desiredMemberClaim } from './desired-member-claim.ts';
import { desiredMemberPod, type MemberJoin } from './desired-member-pod.ts';
import type { MemberAddressing } from './member-addressing.ts';
import type { OwnedObjects } from './owned-objects.ts';

export interface KubeMemberRuntimeDeps {
  readonly cluster: EtcdCluster;
  readonly client: KubeClient;
  readonly events: EventRecorder;
  readonly owned: OwnedObjects;
  readonly addressing: MemberAddressing;
  /** The image members of this cluster run. */
  readonly image: string;
}

const isGoing = (meta: V1ObjectMeta | undefined) => Boolean(meta?.deletionTimestamp);

/** Makes sure the claim and pod of `member` exist, for the etcd member `memberId` (hex or `seed`). */
export async function ensureMemberObjects(
  deps: KubeMemberRuntimeDeps,
  member: string,
  join: MemberJoin,
  memberId: string,
  /** Changes the pod before it is created (the first member of a restored cluster gets init containers). */
  decorate: (pod: V1Pod) => V1Pod = (pod) => pod,
): Promise<'created' | 'present' | 'waiting'> {
  const { cluster, client, owned, addressing } = deps;
  const claim = owned.claim(cluster, claimName(member));
  const pod = owned.pod(cluster, member);
  if (isGoing(claim?.metadata) || isGoing(pod?.metadata)) return 'waiting';
  let created = false;
  if (!claim) {
    await client.create(builtin.persistentVolumeClaims, desiredMemberClaim(cluster, member, memberId));
    created = true;
  }
  if (!pod) {
    const [urls, listen] = await Promise.all([
      addressing.urls(cluster, member),
      addressing.listen(cluster, member),
    ]);
    const tls = tlsSecretNames(cluster);
    const peerCn = await peerCommonName(cluster, client, owned);
    await client.create(
      builtin.pods,
      decorate(
        desiredMemberPod(cluster, {
          member,
          image: deps.image,
          urls,
          listen,
          join,
          memberId,
          tls:
            tls && peerCn
              ? { serverSecret: tls.server, peerSecret: tls.peer, peerCommonName: peerCn }
              : undefined,
        }),
      ),
    );
    created = true;
    await deps.events.normal(
      cluster,
      'MemberPodCreated',
      'Create',
      `created pod ${member} (${join.state === 'new' ? 'first member of a new cluster' : 'joining the cluster'})`,
    );
  }
  return created ? 'created' : 'present';
}

/** Deletes the pod and claim of `member` (its data goes with it). */
export async function deleteMemberObjects(deps: KubeMemberRuntimeDeps, member: string): Promise<boolean> {
  const { cluster, client, owned } = deps;
  const namespace = namespaceOf(cluster);
  const pod = owned.pod(cluster, member);
  const claim = owned.claim(cluster, claimName(member));
  let deleted = false;
  if (pod && !isGoing(pod.metadata)) {
    deleted =
      (await client.delete(builtin.pods, member, namespace, { uid: pod.metadata?.uid ?? '' })) || deleted;
  }
  if (claim && !isGoing(claim.metadata)) {
    deleted =
      (await client.delete(builtin.persistentVolumeClaims, claimName(member), namespace, {
        uid: claim.metadata?.uid ?? '',
      })) || deleted;
  }
  return deleted;
}

/** The member (pod) name whose advertised peer URL is `peerUrl`, among the cluster's pods. */
async function memberOfPeerUrl(deps: KubeMemberRuntimeDeps, peerUrl: string): Promise<string | undefined> {
  for (const pod of deps.owned.podsOf(deps.cluster)) {
    const name = pod.metadata?.name ?? '';
    const urls = await deps.addressing.urls(deps.cluster, name);
    if (normalizeUrl(urls.peerUrl) === normalizeUrl(peerUrl)) return name;
  }
  return undefined;
}

/** The engine's runtime for one reconcile of one cluster. */
export function kubeMemberRuntime(deps: KubeMemberRuntimeDeps): MemberRuntime {
  return {
    async ensureRunning(member: DesiredMember, join: JoinSpec, fresh: boolean) {
      const id = memberIdHex(join.memberId);
      if (fresh) {
        // A never-started member needs an empty data directory: a claim or pod made for another
        // ID belongs to an older identity of this name (a member removed and added back).
        const claim = deps.owned.claim(deps.cluster, claimName(member.name));
        const pod = deps.owned.pod(deps.cluster, member.name);
        const stale =
          (claim && claimMemberId(claim) !== id) ||
          (pod && pod.metadata?.annotations?.[memberIdAnnotation] !== id);
        if (stale) {
          await deleteMemberObjects(deps, member.name);
          await deps.events.normal(
            deps.cluster,
            'StaleMemberDataDeleted',
            'Delete',
            `deleted the pod and claim of ${member.name}: they belong to an earlier member of that name; it joins again empty`,
          );
          return;
        }
      }
      await ensureMemberObjects(
        deps,
        member.name,
        { initialCluster: join.initialCluster, state: 'existing' },
        id,
      );
    },
    async ensureStopped(member) {
      const name = (await memberOfPeerUrl(deps, member.peerUrl)) ?? member.name;
      if (name) await deleteMemberObjects(deps, name);
    },
  };
}
