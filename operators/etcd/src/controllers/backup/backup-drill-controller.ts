// Restore drills (spec.backup.verify, ADR 0311): on a schedule, or when the
// etcd.homeostat.dev/verify-backup annotation changes, a Succeeded backup of a cluster (the newest
// never drilled, else the newest: drillTarget, shared in @homeostat/operator-kit/schedule) is
// restored into a scratch single-member etcd in a pod and claim of its own (drill-pod.ts), and the
// copy's HashKV at the backup's revision is compared with the one the backup recorded. What it
// found goes to the backup's status.verification, the cluster's status (lastVerifiedBackup, the
// BackupVerified condition), an Event and the metrics; then the pod and the claim are deleted.
//
// The drill reads the backup and touches nothing of the cluster's: it makes and deletes only its
// own pod and claim, by their name and uid, and its status fields go under a field manager of
// their own so the cluster controller's status writes and this one's never undo each other.
//
// Its memory is the cluster's status and the pod: lastBackupDrillTime (when the last drill
// started) decides whether a scheduled one is due, lastBackupDrillRequest whether a requested
// one is, and a drill pod that exists is a drill under way, followed again after a restart.
import type { V1Pod } from '@kubernetes/client-node';
import { drillTarget, scheduleDecision } from '@homeostat/operator-kit/schedule';
import {
  builtin,
  mapToLabelledOwner,
  NotFoundError,
  setCondition,
  watch,
  type Controller,
  type KubeClient,
  type Manager,
  type ReconcileContext,
  type ReconcileResult,
} from '@homeostat/reconcile';
import { etcdBackups, type EtcdBackup, type EtcdBackupStatusFields } from '../../api/etcd-backup-types.ts';
import {
  etcdClusters,
  type EtcdCluster,
  type EtcdClusterStatusFields,
} from '../../api/etcd-cluster-types.ts';
import { imageOf } from '../../api/etcd-versions.ts';
import { messageOf } from '../../errors.ts';
import type { DrillMetrics } from '../../metrics/drill-metrics.ts';
import { defaultOperatorImage, managedSelector, nameOf, namespaceOf } from '../cluster-names.ts';
import { drillOutcome, type DrillOutcome } from './drill-outcome.ts';
import { drillBackupAnnotation, drillClaim, drillLabel, drillName, drillPod } from './drill-pod.ts';
import { RestoreRefusal, restoreSourceOfBackup } from './restore-source.ts';

/** Set it to a new value (a timestamp) to run a drill now. */
export const verifyBackupAnnotation = 'etcd.homeostat.dev/verify-backup';
/** The condition a drill writes; no other controller writes it. */
export const backupVerifiedCondition = 'BackupVerified';
/** The drill's own field manager: its status fields and condition are its alone. */
export const drillFieldManager = 'etcd-operator-backup-drill';

export interface BackupDrillOptions {
  /** The clock (tests move it instead of waiting for the schedule). */
  readonly now?: () => Date;
  readonly operatorImage?: string;
  /** Repository of the etcd images (tags v<version>). */
  readonly imageRepository?: string;
  /** How often a running drill is looked at besides its pod's own changes, in ms (default 5 s). */
  readonly followIntervalMs?: number;
  readonly metrics?: DrillMetrics;
}

/** When a drill is due: requested by the annotation, or a cron time passed since the last one. */
export function drillDue(
  cluster: EtcdCluster,
  now: Date,
): { readonly due: boolean; readonly nextAt?: Date; readonly invalid?: string } {
  const request = cluster.metadata?.annotations?.[verifyBackupAnnotation];
  const requested = !!request && request !== cluster.status?.lastBackupDrillRequest;
  const schedule = cluster.spec.backup?.verify?.schedule;
  if (!schedule) return { due: requested };
  // A new cluster waits for the first cron time after it was made, as scheduled backups do.
  const lastRun = Math.max(
    new Date(cluster.metadata?.creationTimestamp ?? 0).getTime() || 0,
    Date.parse(cluster.status?.lastBackupDrillTime ?? '') || 0,
  );
  let decision;
  try {
    decision = scheduleDecision(schedule, now, lastRun);
  } catch (error) {
    return { due: requested, invalid: messageOf(error) };
  }
  return { due: requested || decision.due !== undefined, nextAt: decision.next };
}

/** The newest Succeeded backup taken of this very cluster (its uid), not of an earlier one of the same name. */
export function newestBackupOf(cluster: EtcdCluster, backups: readonly EtcdBackup[]): EtcdBackup | undefined {
  return succeededBackupsOf(cluster, backups)[0];
}

/** This very cluster's Succeeded backups, the newest first. */
function succeededBackupsOf(cluster: EtcdCluster, backups: readonly EtcdBackup[]): EtcdBackup[] {
  return backups
    .filter(
      (b) =>
        b.metadata?.namespace === namespaceOf(cluster) &&
        b.spec.clusterName === nameOf(cluster) &&
        b.status?.phase === 'Succeeded' &&
        !!b.status.finishedAt &&
        (b.status.clusterUid === undefined || b.status.clusterUid === cluster.metadata?.uid),
    )
    .sort((a, b) => (b.status?.finishedAt ?? '').localeCompare(a.status?.finishedAt ?? ''));
}

type DrillStatus = Pick<
  EtcdClusterStatusFields,
  'lastVerifiedBackup' | 'lastBackupDrillTime' | 'lastBackupDrillRequest' | 'conditions'
>;

/** The verdict on a drill, and what status records of it. */
type Verdict =
  | {
      readonly verified: true;
      readonly record: NonNullable<EtcdClusterStatusFields['lastVerifiedBackup']>;
      readonly message: string;
    }
  | { readonly verified: false; readonly reason: string; readonly message: string };

/** Compares what the drill measured with what the backup recorded. */
export function judgeDrill(
  backup: EtcdBackup | undefined,
  backupName: string,
  outcome: Exclude<DrillOutcome, { kind: 'running' }>,
  startedAt: Date,
): Verdict {
  if (outcome.kind === 'failed') {
    return {
      verified: false,
      reason: outcome.reason,
      message: `EtcdBackup ${backupName}: ${outcome.message}`,
    };
  }
  const { result } = outcome;
  const recorded = backup?.status;
  if (!recorded?.revision || !recorded.finishedAt) {
    return {
      verified: false,
      reason: 'BackupDeleted',
      message: `EtcdBackup ${backupName} was deleted (or lost its status) while its drill ran; nothing to compare with`,
    };
  }
  const at = `at revision ${recorded.revision}`;
  if (!recorded.hashKV) {
    return {
      verified: false,
      reason: 'HashNotRecorded',
      message: `EtcdBackup ${backupName} restored and answered, but it recorded no HashKV (taken by an older operator, or its revision was compacted before it was hashed): its keys could not be compared`,
    };
  }
  if (recorded.compactRevision !== undefined && recorded.compactRevision !== result.compactRevision) {
    return {
      verified: false,
      reason: 'HashNotComparable',
      message: `EtcdBackup ${backupName}: the restored copy is compacted at ${result.compactRevision}, the recorded hash counts from ${recorded.compactRevision} (the source was compacted while the backup was taken); take another backup`,
    };
  }
  if (recorded.hashKV !== result.hashKV) {
    return {
      verified: false,
      reason: 'HashMismatch',
      message: `EtcdBackup ${backupName}: HashKV of the restored copy ${at} is ${result.hashKV}, but the backup recorded ${recorded.hashKV}: its keys differ from the source's`,
    };
  }
  const answeredAt = Date.parse(result.answeredAt) || Date.now();
  const restoreSeconds = Math.max(0, (answeredAt - startedAt.getTime()) / 1000);
  const recoveryPointSeconds = Math.max(0, (startedAt.getTime() - Date.parse(recorded.finishedAt)) / 1000);
  return {
    verified: true,
    record: {
      backup: backupName,
      restorePoint: recorded.finishedAt,
      verifiedAt: new Date().toISOString(),
      restoreSeconds: Math.round(restoreSeconds * 10) / 10,
      recoveryPointSeconds: Math.round(recoveryPointSeconds),
      revision: recorded.revision,
      hashKV: result.hashKV,
    },
    message: `EtcdBackup ${backupName} restored into a scratch etcd in ${restoreSeconds.toFixed(1)} s; HashKV ${at} ${result.hashKV}, as recorded`,
  };
}

/** Adds the restore drill controller (another controller of EtcdClusters) to `manager`. */
export function addBackupDrillController(
  manager: Manager,
  options: BackupDrillOptions = {},
): Controller<EtcdCluster> {
  const now = options.now ?? (() => new Date());
  const operatorImage = options.operatorImage ?? defaultOperatorImage;
  const followMs = options.followIntervalMs ?? 5000;
  const backups = manager.cache.informer(etcdBackups);
  // The operator's label-selected caches, shared with the cluster controller's.
  const pods = manager.cache.informer(builtin.pods, { labelSelector: managedSelector });
  const drillPodOf = (cluster: EtcdCluster): V1Pod | undefined =>
    pods.store.get(`${namespaceOf(cluster)}/${drillName(cluster)}`);

  /** Writes the drill's fields of status, under its own field manager. */
  async function writeStatus(
    client: KubeClient,
    cluster: EtcdCluster,
    fields: Omit<DrillStatus, 'conditions'>,
    condition?: { status: 'True' | 'False'; reason: string; message: string },
  ): Promise<void> {
    const own = client.withOptions({ fieldManager: drillFieldManager });
    // The fields carried over are read from the API server, not the cache: one a moment behind
    // (without the drill time written at the start) would send less, and apply removes what a
    // field manager stops sending.
    const live = await client.find(etcdClusters, nameOf(cluster), namespaceOf(cluster));
    if (!live || live.metadata?.uid !== cluster.metadata?.uid) return;
    const previous = live.status?.conditions?.find((c) => c.type === backupVerifiedCondition);
    const conditions = condition
      ? setCondition(
          previous ? [previous] : [],
          { type: backupVerifiedCondition, ...condition },
          live.metadata?.generation,
          now(),
        )
      : previous
        ? [previous]
        : [];
    // Every field this manager owns is sent each time: one left out would be removed.
    const status: DrillStatus = {
      ...(live.status?.lastVerifiedBackup ? { lastVerifiedBackup: live.status.lastVerifiedBackup } : {}),
      ...(live.status?.lastBackupDrillTime ? { lastBackupDrillTime: live.status.lastBackupDrillTime } : {}),
      ...(live.status?.lastBackupDrillRequest
        ? { lastBackupDrillRequest: live.status.lastBackupDrillRequest }
        : {}),
      ...fields,
      conditions,
    };
    await own.applyStatus(etcdClusters, {
      metadata: { name: nameOf(cluster), namespace: namespaceOf(cluster), uid: cluster.metadata?.uid ?? '' },
      status,
    });
  }

  async function report(
    cluster: EtcdCluster,
    ctx: ReconcileContext,
    verdict: Verdict,
    fields: Omit<DrillStatus, 'conditions'> = {},
  ): Promise<void> {
    if (verdict.verified) {
      await writeStatus(
        ctx.client,
        cluster,
        { ...fields, lastVerifiedBackup: verdict.record },
        {
          status: 'True',
          reason: 'BackupRestored',
          message: verdict.message,
        },
      );
      await ctx.events.normal(cluster, 'BackupVerified', 'Verify', verdict.message);
      options.metrics?.passed(cluster, verdict.record.restoreSeconds, verdict.record.recoveryPointSeconds);
    } else {
      await writeStatus(ctx.client, cluster, fields, {
        status: 'False',
        reason: verdict.reason,
        message: verdict.message,
      });
      await ctx.events.warning(cluster, 'BackupVerificationFailed', 'Verify', verdict.message);
      options.metrics?.failed(cluster, verdict.reason);
    }
  }

  /** A drill under way: its answer recorded and its pod and claim deleted once it has one. */
  async function follow(cluster: EtcdCluster, pod: V1Pod, ctx: ReconcileContext): Promise<ReconcileResult> {
    const startedAt = new Date(pod.metadata?.creationTimestamp ?? now().toISOString());
    const timeoutSeconds = cluster.spec.backup?.verify?.timeoutSeconds ?? 1800;
    let outcome = drillOutcome(pod);
    if (outcome.kind === 'running') {
      const left = startedAt.getTime() + timeoutSeconds * 1000 - now().getTime();
      if (left > 0) return { requeueAfterMs: Math.min(followMs, left) };
      outcome = {
        kind: 'failed',
        reason: 'DrillTimedOut',
        message: `not done after ${timeoutSeconds} s (spec.backup.verify.timeoutSeconds): pod ${pod.metadata?.name ?? ''} is ${pod.status?.phase ?? 'Pending'}${pod.status?.message ? `: ${pod.status.message}` : ''}`,
      };
    }
    const backupName = pod.metadata?.annotations?.[drillBackupAnnotation] ?? '';
    const backup = backups.store.get(`${namespaceOf(cluster)}/${backupName}`);
    // Recorded before the pod goes: an operator stopped between the two finds the pod again and
    // records the same answer, rather than losing it.
    const verdict = judgeDrill(backup, backupName, outcome, startedAt);
    await recordOnBackup(ctx.client, namespaceOf(cluster), backup ? backupName : '', verdict);
    await report(cluster, ctx, verdict);
    await cleanUp(cluster, pod, ctx.client);
    return {};
  }

  /** The verdict on the EtcdBackup the drill restored, under the drill's field manager. */
  async function recordOnBackup(
    client: KubeClient,
    namespace: string,
    backupName: string,
    verdict: Verdict,
  ): Promise<void> {
    if (!backupName) return; // deleted while its drill ran: nothing to record it on
    const drilledAt = now().toISOString();
    const verification: NonNullable<EtcdBackupStatusFields['verification']> = verdict.verified
      ? { result: 'Verified', drilledAt, restoreSeconds: verdict.record.restoreSeconds }
      : { result: 'Failed', drilledAt, reason: verdict.reason, message: verdict.message.slice(0, 1024) };
    await client
      .withOptions({ fieldManager: drillFieldManager })
      .applyStatus(etcdBackups, { metadata: { name: backupName, namespace }, status: { verification } })
      .catch((error: unknown) => {
        if (!(error instanceof NotFoundError)) throw error;
      });
  }

  async function cleanUp(cluster: EtcdCluster, pod: V1Pod, client: KubeClient): Promise<void> {
    const namespace = namespaceOf(cluster);
    await client.delete(builtin.pods, drillName(cluster), namespace, { uid: pod.metadata?.uid ?? '' });
    const claim = await client.find(builtin.persistentVolumeClaims, drillName(cluster), namespace);
    // Only the drill's own claim, by its label as well as its name.
    if (claim?.metadata?.labels?.[drillLabel] === nameOf(cluster)) {
      await client.delete(builtin.persistentVolumeClaims, drillName(cluster), namespace, {
        uid: claim.metadata.uid ?? '',
      });
    }
  }

  /**
   * True once no claim of an earlier drill is left. Every drill fetches into a new, empty claim:
   * one left behind (an operator stopped between the deletes) still holds the snapshot it
   * fetched, and a drill on it would prove that copy rather than what is in the bucket now.
   */
  async function claimGone(cluster: EtcdCluster, client: KubeClient): Promise<boolean> {
    const namespace = namespaceOf(cluster);
    // Read from the API server, not the cache: a drill just started may not be in the cache yet,
    // and its claim is never taken for a leftover.
    if (await client.find(builtin.pods, drillName(cluster), namespace)) return false;
    const claim = await client.find(builtin.persistentVolumeClaims, drillName(cluster), namespace);
    if (!claim) return true;
    if (!claim.metadata?.deletionTimestamp && claim.metadata?.labels?.[drillLabel] === nameOf(cluster)) {
      await client.delete(builtin.persistentVolumeClaims, drillName(cluster), namespace, {
        uid: claim.metadata.uid ?? '',
      });
    }
    return false;
  }

  /** Starts a drill (drillTarget), or records why there is none to run. */
  async function start(cached: EtcdCluster, ctx: ReconcileContext): Promise<void> {
    // Due by the API server's copy too: a cache a moment behind the status written at the start
    // of the last drill would otherwise start the same drill again.
    const cluster = await ctx.client.find(etcdClusters, nameOf(cached), namespaceOf(cached));
    if (!cluster || cluster.metadata?.uid !== cached.metadata?.uid || !drillDue(cluster, now()).due) return;
    const startedAt = now().toISOString();
    const request = cluster.metadata?.annotations?.[verifyBackupAnnotation];
    const fields = {
      lastBackupDrillTime: startedAt,
      ...(request ? { lastBackupDrillRequest: request } : {}),
    };
    // The newest never drilled, else the newest (the rule both operators share).
    const { backup } = drillTarget(succeededBackupsOf(cluster, backups.store.list()));
    if (!backup) {
      await report(
        cluster,
        ctx,
        {
          verified: false,
          reason: 'NoBackup',
          message: `no Succeeded EtcdBackup of cluster ${nameOf(cluster)} to restore`,
        },
        fields,
      );
      return;
    }
    const backupName = backup.metadata?.name ?? '';
    const etcdImage = imageOf(cluster.spec.version, options.imageRepository);
    let source;
    try {
      source = await restoreSourceOfBackup(backup, ctx.client);
    } catch (error) {
      if (!(error instanceof RestoreRefusal)) throw error;
      await report(cluster, ctx, { verified: false, reason: error.reason, message: error.message }, fields);
      return;
    }
    if (!etcdImage || !backup.status?.revision) {
      await report(
        cluster,
        ctx,
        {
          verified: false,
          reason: 'RestoreFailed',
          message: `EtcdBackup ${backupName}: no etcd image for version ${cluster.spec.version}, or no revision recorded`,
        },
        fields,
      );
      return;
    }
    // Status first: a drill that has started is never started twice for the same time or request.
    await writeStatus(ctx.client, cluster, fields);
    await ctx.client.create(builtin.persistentVolumeClaims, drillClaim(cluster));
    await ctx.client.create(
      builtin.pods,
      drillPod({
        cluster,
        backupName,
        revision: backup.status.revision,
        source,
        images: { operator: operatorImage, etcd: etcdImage },
      }),
    );
    await ctx.events.normal(
      cluster,
      'BackupDrillStarted',
      'Verify',
      `restoring EtcdBackup ${backupName} (${source.describe}, revision ${backup.status.revision}) into a scratch etcd, pod ${drillName(cluster)}`,
    );
  }

  return manager.controller({
    name: 'etcdbackupdrill',
    for: etcdClusters,
    watches: [
      // A drill pod's progress wakes its cluster.
      watch({ type: builtin.pods, labelSelector: managedSelector, map: mapToLabelledOwner(drillLabel) }),
    ],
    async reconcile({ object: cluster, namespace, name }, ctx): Promise<ReconcileResult> {
      if (!cluster || cluster.metadata?.deletionTimestamp) {
        options.metrics?.forget({ namespace: namespace ?? '', name });
        // The pod and claim are owned by the cluster: the garbage collector deletes them.
        return {};
      }
      const pod = drillPodOf(cluster);
      if (pod && !pod.metadata?.deletionTimestamp) return follow(cluster, pod, ctx);
      if (pod || cluster.spec.paused) return pod ? { requeueAfterMs: followMs } : {};
      const { due, nextAt, invalid } = drillDue(cluster, now());
      if (invalid) {
        await ctx.events.warning(
          cluster,
          'InvalidSchedule',
          'Verify',
          `spec.backup.verify.schedule ${JSON.stringify(cluster.spec.backup?.verify?.schedule)} is not a cron expression: ${invalid}; no scheduled drills`,
        );
      }
      if (due) {
        // A claim still being deleted (its volume released after the pod is gone) is waited for.
        if (await claimGone(cluster, ctx.client)) await start(cluster, ctx);
        return { requeueAfterMs: followMs };
      }
      return nextAt ? { requeueAfterMs: Math.max(1000, nextAt.getTime() - now().getTime()) } : {};
    },
  });
}
