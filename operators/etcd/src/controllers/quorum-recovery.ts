// Disaster recovery after quorum loss (spec.recovery, ADR 0303): with RestoreNewestBackup, a
// majority that stays lost for afterSeconds, as the members' side shows it (quorum-evidence.ts,
// ADR 0305: never the operator's failure to connect), makes the operator build the cluster again from
// the newest Succeeded EtcdBackup of this very EtcdCluster (its uid, not an earlier cluster of the
// same name) whose file verifies, in a bucket (read by the operator) or in a
// claim (read by a check pod; never one of the member claims the recovery deletes). Each step is
// recorded in status.recovery before the next one is taken, so an operator restarted at any line
// carries on where it was:
// Waiting → (backup chosen and verified) Restoring → (every lost member's pod and claim gone)
// membersDeleted → (first member restored, answers with a new cluster ID) Recovered. The other
// members then join as learners, as in any new cluster. The backup is only read.
import type { EventRecorder } from '@homeostat/reconcile';
import type { EtcdBackup } from '../api/etcd-backup-types.ts';
import { etcdClusters, type EtcdCluster, type RecoveryStatusFields } from '../api/etcd-cluster-types.ts';
import { messageOf } from '../errors.ts';
import type { ClusterHealth } from '../health/cluster-health.ts';
import { memberIdHex } from '../member-id.ts';
import {
  restoreSourceOfBackup,
  RestoreRefusal,
  verifyRestoreSource,
  type RestoreSource,
} from './backup/restore-source.ts';
import { verifyClaimBackup } from './backup/claim-verify.ts';
import { memberLabel, nameOf, namespaceOf, ordinalOf } from './cluster-names.ts';
import type { Problem } from './cluster-status.ts';
import { deleteMemberObjects, type KubeMemberRuntimeDeps } from './kube-member-runtime.ts';
import { quorumEvidence, type QuorumEvidence } from './quorum-evidence.ts';

export interface RecoveryRound {
  readonly cluster: EtcdCluster;
  readonly deps: KubeMemberRuntimeDeps;
  readonly events: EventRecorder;
  /** etcd's view this reconcile; undefined when no member answers. */
  readonly health: ClusterHealth | undefined;
  /** Every EtcdBackup in the cluster's namespace (from the cache). */
  readonly backups: readonly EtcdBackup[];
  /** Creates the first member restored from `backup` (member-steps.ts's seed; idempotent). */
  readonly seedFrom: (backup: EtcdBackup) => Promise<void>;
  /** The operator's own image: a backup in a claim is checked by a pod of it. */
  readonly operatorImage: string;
  /** Backups already refused (kept by the reconciler across reconciles). */
  readonly refused: RefusedBackups;
  /**
   * This operator's last status write left a recovery open (Waiting, Failed, Restoring): its cache
   * may not show that write yet, and a quorum back must still end the recovery (RecoveryCancelled)
   * rather than drop it from status unsaid.
   */
  readonly openAsWritten?: boolean;
  readonly now: Date;
}

export interface RecoveryDecision {
  /** status.recovery to write (undefined: none yet). */
  readonly status: RecoveryStatusFields | undefined;
  /** The recovery drives the members this reconcile: the usual membership steps are skipped. */
  readonly inCharge: boolean;
  /** Look again this soon (a wait running out, a step to follow). */
  readonly requeueAfterMs?: number;
  /** The operator reads no quorum but the members' side shows one: why (cluster-status.ts). */
  readonly operatorCutOff?: string;
  /** Something a person must know about: Degraded. */
  readonly problem?: Problem;
  /**
   * The EtcdCluster the decision was made from: read from the API server while quorum is lost or a
   * recovery is open (the status to compare with and to write over), else the cached one.
   */
  readonly seen?: EtcdCluster;
}

const seconds = (ms: number) => Math.round(ms / 1000);

/** How long a refusal that may pass (a claim still binding, a bucket not answering) is believed. */
const retryRefusedAfterMs = 60_000;

/**
 * Backups the recovery found it cannot restore, by uid, so that each is read (for a claim: by a
 * pod) and reported once rather than at every reconcile, and the search moves on to older ones. An
 * operator restart forgets them: they are checked once more.
 */
export class RefusedBackups {
  readonly #refusals = new Map<string, { readonly error: RestoreRefusal; readonly at: number }>();

  /** The refusal of `backup` still believed at `now`, if any. */
  get(backup: EtcdBackup, now: Date): RestoreRefusal | undefined {
    const entry = this.#refusals.get(backup.metadata?.uid ?? '');
    if (!entry) return undefined;
    if (entry.error.permanent || now.getTime() - entry.at < retryRefusedAfterMs) return entry.error;
    this.#refusals.delete(backup.metadata?.uid ?? '');
    return undefined;
  }

  add(backup: EtcdBackup, error: RestoreRefusal, now: Date): void {
    this.#refusals.set(backup.metadata?.uid ?? '', { error, at: now.getTime() });
  }
}

/** Whether `recovery` is still to end: waiting, failed for now, or restoring. */
export const isOpen = (recovery: RecoveryStatusFields | undefined) =>
  recovery?.phase === 'Waiting' || recovery?.phase === 'Failed' || recovery?.phase === 'Restoring';

/**
 * Decides and takes this reconcile's step of a disaster recovery, if any. Each step is decided from
 * status.recovery as the API server holds it, not as the cache shows it: the cache may not have
 * seen this operator's last status write yet, and a step decided from the state before it would be
 * taken again, its Event emitted twice (and a new quorumLostAt moving the wait on).
 */
export async function superviseQuorum(round: RecoveryRound): Promise<RecoveryDecision> {
  // Lost only on the members' evidence: the operator's failure to connect deletes nothing.
  const evidence = quorumEvidence(round.cluster, round.health, round.deps.owned.podsOf(round.cluster));
  const cutOff = evidence.operatorCutOff
    ? {
        operatorCutOff: evidence.operatorCutOff,
        problem: { reason: 'MembersUnreachable', message: evidence.operatorCutOff },
      }
    : {};
  if (!evidence.lost && !isOpen(round.cluster.status?.recovery) && !round.openAsWritten) {
    return { status: round.cluster.status?.recovery, inCharge: false, seen: round.cluster, ...cutOff };
  }
  const seen =
    (await round.deps.client.find(etcdClusters, nameOf(round.cluster), namespaceOf(round.cluster))) ??
    round.cluster;
  const decision = await decide({ ...round, cluster: seen }, evidence);
  return { ...cutOff, ...decision, seen };
}

async function decide(round: RecoveryRound, evidence: QuorumEvidence): Promise<RecoveryDecision> {
  const { lost } = evidence;
  const { cluster, now } = round;
  const previous = cluster.status?.recovery;
  if (previous?.phase === 'Restoring') return continueRestore(round, previous);
  const policy = cluster.spec.recovery?.onQuorumLoss ?? 'Manual';
  const open = previous?.phase === 'Waiting' || previous?.phase === 'Failed' ? previous : undefined;

  if (policy !== 'RestoreNewestBackup' || !lost) {
    if (!open) return { status: previous, inCharge: false };
    const message = lost
      ? 'spec.recovery.onQuorumLoss is no longer RestoreNewestBackup: nothing restored'
      : evidence.operatorCutOff
        ? `${evidence.operatorCutOff} (${seconds(now.getTime() - Date.parse(open.quorumLostAt))} s after the operator lost it)`
        : `a majority answers again ${seconds(now.getTime() - Date.parse(open.quorumLostAt))} s after quorum was lost: nothing restored`;
    await round.events.normal(cluster, 'RecoveryCancelled', 'Recover', message);
    return {
      status: { ...open, phase: 'Cancelled', finishedAt: now.toISOString(), message },
      inCharge: false,
    };
  }

  const afterMs = (cluster.spec.recovery?.afterSeconds ?? 300) * 1000;
  const lostAt = open ? new Date(open.quorumLostAt) : now;
  const restoreAt = new Date(lostAt.getTime() + afterMs);
  const generation = previous?.generation ?? 0;
  if (now < restoreAt) {
    const message = `quorum lost at ${lostAt.toISOString()}: restoring from the newest backup at ${restoreAt.toISOString()} unless a majority answers before`;
    if (!open) await round.events.warning(cluster, 'RecoveryScheduled', 'Recover', message);
    return {
      status: {
        phase: 'Waiting',
        generation,
        quorumLostAt: lostAt.toISOString(),
        restoreAt: restoreAt.toISOString(),
        message,
      },
      inCharge: false,
      requeueAfterMs: restoreAt.getTime() - now.getTime(),
    };
  }

  const chosen = await newestGoodBackup(round);
  if (chosen.checking) {
    // A backup in a claim is read by its check pod: wait for its answer before anything is deleted.
    const message = `quorum lost for ${seconds(now.getTime() - lostAt.getTime())} s: checking EtcdBackup ${chosen.checking.metadata?.name ?? ''} (${chosen.checking.status?.location ?? ''}) with a pod before restoring from it`;
    return {
      status: {
        phase: open?.phase ?? 'Waiting',
        generation,
        quorumLostAt: lostAt.toISOString(),
        restoreAt: restoreAt.toISOString(),
        message,
      },
      inCharge: false,
      requeueAfterMs: 1000,
    };
  }
  if (!chosen.backup || !chosen.source) {
    const message = `quorum lost for ${seconds(now.getTime() - lostAt.getTime())} s and no backup can be restored: ${chosen.why}; create a backup destination or restore by hand (see the guide)`;
    if (open?.phase !== 'Failed') await round.events.warning(cluster, 'NoUsableBackup', 'Recover', message);
    return {
      status: {
        phase: 'Failed',
        generation,
        quorumLostAt: lostAt.toISOString(),
        restoreAt: restoreAt.toISOString(),
        message,
      },
      inCharge: false,
      requeueAfterMs: 30_000,
      problem: { reason: 'NoUsableBackup', message },
    };
  }
  const { backup } = chosen;
  const message = `quorum lost for ${seconds(now.getTime() - lostAt.getTime())} s: restoring from EtcdBackup ${backup.metadata?.name ?? ''} (revision ${backup.status?.revision ?? '?'}, finished ${backup.status?.finishedAt ?? '?'}, sha256 verified); deleting the pods and claims of every member of etcd cluster ${cluster.status?.clusterId ?? '?'}, which comes back as a new etcd cluster`;
  await round.events.warning(cluster, 'RecoveryStarted', 'Recover', message);
  return {
    status: {
      phase: 'Restoring',
      generation: generation + 1,
      quorumLostAt: lostAt.toISOString(),
      restoreAt: restoreAt.toISOString(),
      backupName: backup.metadata?.name ?? '',
      ...(backup.status?.revision ? { backupRevision: backup.status.revision } : {}),
      ...(cluster.status?.clusterId ? { lostClusterId: cluster.status.clusterId } : {}),
      membersDeleted: false,
      startedAt: now.toISOString(),
      message,
    },
    inCharge: true,
    requeueAfterMs: 500,
  };
}

/**
 * The claims the recovery deletes: every member claim of this cluster (those that exist, and the
 * names a member of any size would have). A backup kept in one would be deleted with the members.
 */
function isMemberClaim(round: RecoveryRound, claim: string): boolean {
  const { cluster } = round;
  if (round.deps.owned.claimsOf(cluster).some((c) => c.metadata?.name === claim)) return true;
  return claim.endsWith('-data') && ordinalOf(nameOf(cluster), claim.slice(0, -'-data'.length)) !== undefined;
}

/**
 * Reads a backup's snapshot through its checks, wherever it is: the operator reads one in a bucket
 * itself; one in a claim is read by a pod of the operator image (claim-verify.ts), so that takes a
 * few reconciles: undefined until the pod has answered. Throws RestoreRefusal when it is refused.
 */
async function checkBackup(round: RecoveryRound, source: RestoreSource): Promise<boolean> {
  const { cluster } = round;
  if (!source.claim) {
    await verifyRestoreSource(source, namespaceOf(cluster), round.deps.client);
    return true;
  }
  if (isMemberClaim(round, source.claim.claimName)) {
    throw new RestoreRefusal(
      'BackupOnMemberClaim',
      `${source.describe}: claim ${source.claim.claimName} holds a member's data and is deleted with the lost members; keep backups in a claim of their own`,
      true,
    );
  }
  const verified = await verifyClaimBackup({
    cluster,
    source: { ...source, claim: source.claim },
    image: round.operatorImage,
    client: round.deps.client,
  });
  return verified !== undefined;
}

/**
 * Refuses a backup of an earlier EtcdCluster of the same name (deleted and created again): it
 * holds another cluster's data, and a recovery never restores it by itself (bootstrap.fromBackup
 * naming it still may: that is a person's choice). A backup recorded before the cluster's uid was
 * (an older operator) is judged by when it was made: one made before this cluster is not of it.
 */
function earlierClusterRefusal(backup: EtcdBackup, cluster: EtcdCluster): RestoreRefusal | undefined {
  const uid = cluster.metadata?.uid ?? '';
  const recorded = backup.status?.clusterUid;
  const ours =
    recorded !== undefined
      ? recorded === uid
      : new Date(backup.metadata?.creationTimestamp ?? 0).getTime() >
        new Date(cluster.metadata?.creationTimestamp ?? 0).getTime();
  if (ours) return undefined;
  const of = recorded !== undefined ? `uid ${recorded}` : 'made before this one';
  return new RestoreRefusal(
    'BackupOfEarlierCluster',
    `taken of an earlier EtcdCluster named ${nameOf(cluster)} (${of}), not of this one (uid ${uid}): never restored by a recovery; restore it by hand with bootstrap.fromBackup if it is what you want`,
    true,
  );
}

/**
 * The newest Succeeded backup of this cluster whose snapshot reads back through its checks, or the
 * one whose check pod has not answered yet (`checking`).
 */
async function newestGoodBackup(
  round: RecoveryRound,
): Promise<{ backup?: EtcdBackup; source?: RestoreSource; checking?: EtcdBackup; why: string }> {
  const { cluster } = round;
  const candidates = round.backups
    .filter(
      (b) =>
        b.metadata?.namespace === namespaceOf(cluster) &&
        b.spec.clusterName === nameOf(cluster) &&
        b.status?.phase === 'Succeeded',
    )
    .sort((a, b) => Date.parse(b.status?.finishedAt ?? '') - Date.parse(a.status?.finishedAt ?? ''));
  const skipped: string[] = [];
  for (const backup of candidates) {
    const name = backup.metadata?.name ?? '';
    const known = round.refused.get(backup, round.now);
    if (known) {
      skipped.push(`${name} (${known.reason})`);
      continue;
    }
    try {
      const earlier = earlierClusterRefusal(backup, cluster);
      if (earlier) throw earlier;
      const source = await restoreSourceOfBackup(backup, round.deps.client);
      if (!(await checkBackup(round, source))) return { checking: backup, why: '' };
      return { backup, source, why: '' };
    } catch (error) {
      if (!(error instanceof RestoreRefusal)) throw error;
      round.refused.add(backup, error, round.now);
      skipped.push(`${name} (${error.reason})`);
      await round.events.warning(
        cluster,
        'RecoveryBackupSkipped',
        'Recover',
        `EtcdBackup ${name} cannot be restored: ${messageOf(error)}; trying the next older one`,
      );
    }
  }
  return {
    why: candidates.length
      ? `every Succeeded EtcdBackup was refused: ${skipped.join(', ')}`
      : 'this cluster has no Succeeded EtcdBackup',
  };
}

/** Restoring: delete the lost members, then seed from the backup, until the new cluster answers. */
async function continueRestore(round: RecoveryRound, state: RecoveryStatusFields): Promise<RecoveryDecision> {
  const { cluster, deps, now } = round;
  const busy = { inCharge: true, requeueAfterMs: 1000 };
  if (!state.membersDeleted) {
    const members = new Set(
      [...deps.owned.podsOf(cluster), ...deps.owned.claimsOf(cluster)].map(
        (o) => o.metadata?.labels?.[memberLabel] ?? '',
      ),
    );
    members.delete('');
    for (const member of members) await deleteMemberObjects(deps, member);
    if (members.size > 0) return { status: state, ...busy };
    const message = `deleted the pods and claims of every member of etcd cluster ${state.lostClusterId ?? '?'}; restoring the first member from EtcdBackup ${state.backupName ?? '?'}`;
    await round.events.normal(cluster, 'LostMembersDeleted', 'Recover', message);
    return { status: { ...state, membersDeleted: true, message }, ...busy };
  }
  const health = round.health;
  const clusterId = health ? memberIdHex(health.clusterId) : undefined;
  if (health?.hasQuorum && clusterId !== state.lostClusterId) {
    const took = seconds(now.getTime() - Date.parse(state.startedAt ?? now.toISOString()));
    const message = `etcd cluster ${clusterId ?? '?'} answers with the keys of EtcdBackup ${state.backupName ?? '?'} (revision ${state.backupRevision ?? '?'}), ${took} s after the restore began; the other members join as learners`;
    await round.events.normal(cluster, 'RecoveryCompleted', 'Recover', message);
    return {
      status: { ...state, phase: 'Recovered', finishedAt: now.toISOString(), message },
      inCharge: false,
    };
  }
  const backup = round.backups.find(
    (b) => b.metadata?.name === state.backupName && b.metadata?.namespace === namespaceOf(cluster),
  );
  if (!backup) {
    const message = `EtcdBackup ${state.backupName ?? '?'}, chosen for the recovery, is gone; create the cluster again from another backup`;
    return {
      status: state,
      inCharge: true,
      requeueAfterMs: 30_000,
      problem: { reason: 'BackupNotFound', message },
    };
  }
  await round.seedFrom(backup);
  return { status: state, ...busy };
}
