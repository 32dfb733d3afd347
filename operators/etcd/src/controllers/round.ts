// One reconcile of one EtcdCluster, a round: what its phases work with, and what builds it (the
// desired members, the member pods' client URLs, the operator's client certificate).
import type { ReconcileContext } from '@homeostat/reconcile';
import type { EtcdCluster } from '../api/etcd-cluster-types.ts';
import type { EtcdConnection } from '../connection.ts';
import { messageOf } from '../errors.ts';
import type { DesiredMember } from '../membership/membership-reconciler.ts';
import { desiredMemberNames, nameOf, ordinalOf } from './cluster-names.ts';
import { clientCredentials } from './cluster-tls.ts';
import type { KubeMemberRuntimeDeps } from './kube-member-runtime.ts';
import type { MemberAddressing } from './member-addressing.ts';
import type { OwnedObjects } from './owned-objects.ts';
import { Refusal } from './refusal.ts';
import type { VersionChange } from './version-change.ts';

/** What a round knows before it connects to etcd. */
export interface RoundStart {
  readonly cluster: EtcdCluster;
  readonly ctx: ReconcileContext;
  /** The member runtime: its `image` is the one members are made with this round. */
  readonly deps: KubeMemberRuntimeDeps;
  readonly desired: readonly DesiredMember[];
}

/** What one reconcile of one cluster works with. */
export interface Round extends RoundStart {
  readonly connection: EtcdConnection;
}

/** The members the spec asks for, with their URLs. */
export async function desiredMembers(
  cluster: EtcdCluster,
  addressing: MemberAddressing,
): Promise<DesiredMember[]> {
  return Promise.all(
    desiredMemberNames(cluster).map(async (name) => ({ name, ...(await addressing.urls(cluster, name)) })),
  );
}

/** Client URLs of every member that has a pod: the engine asks each in turn. */
export async function endpointsOf(
  cluster: EtcdCluster,
  owned: OwnedObjects,
  addressing: MemberAddressing,
): Promise<string[]> {
  const names = owned
    .podsOf(cluster)
    .map((p) => p.metadata?.name ?? '')
    .filter((n) => ordinalOf(nameOf(cluster), n) !== undefined)
    .sort((a, b) => (ordinalOf(nameOf(cluster), a) ?? 0) - (ordinalOf(nameOf(cluster), b) ?? 0));
  return Promise.all(names.map(async (n) => (await addressing.urls(cluster, n)).clientUrl));
}

/** The operator's client certificate for this cluster; a Secret it cannot use is a Refusal. */
export async function credentialsOf(
  cluster: EtcdCluster,
  ctx: ReconcileContext,
  owned: OwnedObjects,
): Promise<EtcdConnection['credentials']> {
  try {
    return await clientCredentials(cluster, ctx.client, owned);
  } catch (error) {
    throw new Refusal('ClientCertificateUnusable', messageOf(error), { cause: error });
  }
}

/**
 * The round as a version change leaves it: after a way back etcd would refuse, nothing is rolled,
 * and a member made again meanwhile runs what the others run, not the version its data cannot go
 * back to.
 */
export function keepingRunningVersion(round: Round, change: VersionChange): Round {
  if (change.kind !== 'refused') return round;
  return { ...round, deps: { ...round.deps, image: change.keepImage } };
}
