// Rolling upgrade of an EtcdCluster's members to spec.version: one member at a time, and only
// while every member is healthy and the membership is settled. A member is upgraded by changing
// its pod's image in place (the one pod field Kubernetes lets change): the kubelet restarts etcd
// on the new image with the same pod, claim and data. The next member waits until this one is
// healthy in etcd, runs the new version, its container has run for two readiness periods and its
// pod is Ready. Followers go first, the leader
// last; before the leader is restarted, leadership is handed to an upgraded member (etcd's
// MoveLeader), so the cluster never holds an election with one member down. The API server
// already refused skipped minors, and a way back to an older minor once etcd's cluster version has
// moved (version-change.ts checks etcd again before this runs).
// The way back goes the same way, with one exception: a member down on a newer image than the
// target (a member that crash-loops on the new version, which is why one goes back) goes first,
// as long as every other member is a healthy voter. It serves nothing as it is, so restarting it
// costs no availability, and waiting for it to be healthy would wait forever.
// The same roll moves members made before their peer port accepted only peer certificates
// (`--peer-cert-allowed-cn`, ADR 0305) to a pod with that flag: a pod's flags cannot change, so the
// pod is deleted and made again at once with its claim (its data and identity kept). So is the
// first member of a cluster restored from a backup, once every member is a healthy voter: its pod
// carries the restore's init containers, which the kubelet runs again whenever it makes the pod's
// sandbox again (a node reboot), and which need the backup and its Secret, gone by then perhaps.
// Pods the operator makes after a restore never carry them.
// A restart request (homeostat.dev/restartedAt on the cluster, `kubectl homeostat restart`) rolls
// the same way: a member whose pod was made under another request (or none) is behind, and its
// pod is made again with its claim. No request on the cluster and none on the pods: nothing behind.
import type { V1Pod } from '@kubernetes/client-node';
import { restartedAtAnnotation, restartRequest } from '@homeostat/operator-kit';
import { builtin, hasReadyCondition } from '@homeostat/reconcile';
import type { EtcdConnection } from '../connection.ts';
import type { ClusterHealth } from '../health/cluster-health.ts';
import type { MemberHealth } from '../health/member-status.ts';
import { handOverLeadership } from '../membership/membership-changes.ts';
import { normalizeUrl } from '../membership/members.ts';
import type { DesiredMember } from '../membership/membership-reconciler.ts';
import { namespaceOf, ordinalOf, nameOf, tlsSecretNames } from './cluster-names.ts';
import { peerCommonName } from './cluster-tls.ts';
import { acceptsOnlyPeers, podImage, readinessPeriodSeconds } from './desired-member-pod.ts';
import type { KubeMemberRuntimeDeps } from './kube-member-runtime.ts';
import { carriesRestore } from './backup/restore-pod.ts';
import { versionRank } from './cluster-status.ts';

export type UpgradeOutcome =
  | { readonly kind: 'at-version' }
  | { readonly kind: 'waiting'; readonly reason: string }
  | { readonly kind: 'rolled'; readonly member: string; readonly from: string; readonly to: string }
  /**
   * `member`'s pod deleted to be made again (`why`: the flags it lacks, or a restart request), its
   * claim kept. `restart`: the request it is made again for; `first` when no member had it yet.
   */
  | {
      readonly kind: 'recreated';
      readonly member: string;
      readonly why: string;
      readonly restart?: { readonly requestedAt: string; readonly first: boolean };
    }
  /** Leadership handed from `member` (the next to restart) to `to` first; the restart comes next. */
  | { readonly kind: 'leader-moved'; readonly member: string; readonly to: string };

/**
 * How long a restarted member's container must have run before the next member restarts. Right
 * after a restart the kubelet can report the new container Ready and then, a few seconds later, not
 * Ready (e2e under load: the next member restarted 1.3-1.5 s after the previous container started,
 * and the Service was left with one of three pods). Two readiness periods, as a StatefulSet's
 * minReadySeconds would, let the kubelet's view of the new container settle first.
 */
export const minRunningMs = 2 * readinessPeriodSeconds * 1000;

/**
 * Whether a container whose status says it started at `startedAt` has surely run `minRunningMs` by
 * `now`. The API server keeps such times to the whole second (RFC 3339 without a fraction), so a
 * container stamped 12:00:05 may have started at 12:00:05.999: count from the end of that second,
 * or the wait can fall up to a second short.
 */
export function hasRunLongEnough(startedAt: Date | string | undefined, now: number): boolean {
  const stamped = startedAt === undefined ? Number.NaN : new Date(startedAt).getTime();
  if (!Number.isFinite(stamped)) return false;
  const latestStart = Math.floor(stamped / 1000) * 1000 + 1000;
  return now - latestStart >= minRunningMs;
}

/**
 * Ready as the kubelet last reported it for the image the pod now names (a Ready condition from
 * before the restart does not count: the kubelet reports the restart a moment after the image
 * changes), with the etcd container running for at least `minRunningMs`.
 */
function isPodReady(pod: V1Pod, now: number): boolean {
  const etcd = pod.status?.containerStatuses?.find((c) => c.name === 'etcd');
  return (
    hasReadyCondition(pod) &&
    etcd?.ready === true &&
    etcd.image === podImage(pod) &&
    hasRunLongEnough(etcd.state?.running?.startedAt, now)
  );
}

function healthOf(health: ClusterHealth, member: DesiredMember): MemberHealth | undefined {
  return health.members.find((m) =>
    m.member.peerUrls.some((u) => normalizeUrl(u) === normalizeUrl(member.peerUrl)),
  );
}

/** The version an image tag names (`…/etcd:v3.7.3` → 3.7.3). */
export function versionOfImage(image: string | undefined): string | undefined {
  return /:v(\d+\.\d+\.\d+)$/.exec(image ?? '')?.[1];
}

/**
 * Moves at most one member to the spec's version. Call it only once membership has converged (no
 * learner, every desired member a voter): it checks again that every member answers healthy, and
 * that a member already on the new image runs the new version before it touches the next.
 */
export async function rollUpgradeStep(
  deps: KubeMemberRuntimeDeps,
  desired: readonly DesiredMember[],
  health: ClusterHealth,
  connection: EtcdConnection,
): Promise<UpgradeOutcome> {
  const { cluster, owned, client } = deps;
  const target = cluster.spec.version;
  const members = desired.map((d) => ({
    desired: d,
    pod: owned.pod(cluster, d.name),
    health: healthOf(health, d),
  }));
  const lacksTrust = (pod: V1Pod) => tlsSecretNames(cluster) !== undefined && !acceptsOnlyPeers(pod);
  const requestedAt = restartRequest(cluster);
  const missesRestart = (pod: V1Pod) => restartRequest(pod) !== requestedAt;
  const remade = (pod: V1Pod) => lacksTrust(pod) || carriesRestore(pod) || missesRestart(pod);
  const behind = members.filter((m) => m.pod && (podImage(m.pod) !== deps.image || remade(m.pod)));
  if (behind.length === 0) return { kind: 'at-version' };

  // Healthy in etcd's eyes and Ready in the kubelet's, settled: the Service and the
  // PodDisruptionBudget count the latter, which lags a restart by a probe period or two.
  const now = Date.now();
  const notReady = members.filter(
    (m) =>
      !m.pod ||
      m.pod.metadata?.deletionTimestamp ||
      !isPodReady(m.pod, now) ||
      !m.health?.healthy ||
      m.health.member.isLearner,
  );
  // Going back: a member down on a newer image than the target goes first (see the top). Down in
  // etcd's eyes and in the kubelet's: a member only the operator cannot reach waits its turn.
  const downOnNewer = behind.filter(
    (m) =>
      m.pod &&
      !m.pod.metadata?.deletionTimestamp &&
      !m.health?.healthy &&
      !hasReadyCondition(m.pod) &&
      versionRank(versionOfImage(podImage(m.pod)) ?? '0.0.0') > versionRank(target),
  );
  const [broken] = downOnNewer;
  if (broken?.pod && health.hasQuorum && health.learners.length === 0) {
    const othersReady = notReady.every((m) => m === broken);
    if (!othersReady) {
      return {
        kind: 'waiting',
        reason: `${broken.desired.name} goes back to ${target} once every other member is a healthy voter (not yet: ${notReady
          .filter((m) => m !== broken)
          .map((m) => m.desired.name)
          .join(', ')})`,
      };
    }
    const from = versionOfImage(podImage(broken.pod)) ?? 'unknown';
    await client.patch(
      builtin.pods,
      broken.desired.name,
      namespaceOf(cluster),
      { spec: { containers: [{ name: 'etcd', image: deps.image }] } },
      { patchType: 'strategic' },
    );
    return { kind: 'rolled', member: broken.desired.name, from, to: target };
  }
  if (!health.hasQuorum || health.learners.length > 0 || notReady.length > 0) {
    return {
      kind: 'waiting',
      reason: `every member must be a healthy voter before the next is upgraded (not yet: ${notReady.map((m) => m.desired.name).join(', ') || 'quorum'})`,
    };
  }
  // A member on the new image that still answers with the old version has not restarted yet.
  const restarting = members.filter(
    (m) => m.pod && podImage(m.pod) === deps.image && m.health?.status?.version !== target,
  );
  if (restarting.length > 0) {
    return {
      kind: 'waiting',
      reason: `${restarting.map((m) => m.desired.name).join(', ')} restarting on ${target}`,
    };
  }

  const leaderId = health.leader?.member.id;
  const clusterName = nameOf(cluster);
  const [next] = [...behind].sort((a, b) => {
    const leaderLast = Number(a.health?.member.id === leaderId) - Number(b.health?.member.id === leaderId);
    if (leaderLast !== 0) return leaderLast;
    return (ordinalOf(clusterName, b.desired.name) ?? 0) - (ordinalOf(clusterName, a.desired.name) ?? 0);
  });
  if (!next?.pod) return { kind: 'at-version' };
  if (next.health && next.health.member.id === leaderId) {
    // Restarting the leader would make the others elect one while it is down; hand leadership to an
    // upgraded member instead (the next reconcile finds this one a follower and restarts it).
    const successor = await handOverLeadership(connection, health, next.health, {
      step: 'move leadership before an upgrade restart',
      prefer: (m) => m.status?.version === target,
    });
    if (successor) {
      const to = members.find((m) => m.health?.member.id === successor.member.id)?.desired.name;
      return { kind: 'leader-moved', member: next.desired.name, to: to ?? successor.member.name };
    }
  }
  if (remade(next.pod)) {
    // Checked before the pod goes: a peer certificate the new pod could not be made with would
    // leave the member down.
    const peerCn = lacksTrust(next.pod) ? await peerCommonName(cluster, client, owned) : undefined;
    await client.delete(builtin.pods, next.desired.name, namespaceOf(cluster), {
      uid: next.pod.metadata?.uid ?? '',
    });
    // The new pod is made with the cluster's request, image and flags: one restart does all three.
    const restart = missesRestart(next.pod) && requestedAt !== undefined;
    return {
      kind: 'recreated',
      member: next.desired.name,
      why: lacksTrust(next.pod)
        ? `its peer port accepted any certificate of the cluster's CA; the new pod accepts only the peer certificate (CN ${peerCn ?? '?'})`
        : carriesRestore(next.pod)
          ? 'its pod still carried the init containers that restored it from a backup, which a node reboot would run again (needing the backup and its Secret); the new pod starts on its data alone'
          : requestedAt === undefined
            ? 'its pod was made under a restart request the cluster no longer carries'
            : `a restart was requested (${restartedAtAnnotation}=${requestedAt})`,
      ...(restart
        ? { restart: { requestedAt, first: members.every((m) => !m.pod || missesRestart(m.pod)) } }
        : {}),
    };
  }
  const from = next.health?.status?.version ?? versionOfImage(podImage(next.pod)) ?? 'unknown';
  // Strategic merge: the containers list is merged by name, so only etcd's image changes.
  await client.patch(
    builtin.pods,
    next.desired.name,
    namespaceOf(cluster),
    { spec: { containers: [{ name: 'etcd', image: deps.image }] } },
    { patchType: 'strategic' },
  );
  return { kind: 'rolled', member: next.desired.name, from, to: target };
}
