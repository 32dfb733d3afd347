// Restore drills (spec.backup.verify, ADR 0218): on the cluster's schedule, a pod with a claim of
// its own restores a base backup (the newest never drilled, else the newest: drillTarget, shared
// in @homeostat/operator-kit/schedule) and every WAL segment archived after it, and checks the
// copy (drill-pod.ts, the entrypoint's run_drill); the result becomes the backup's
// status.verification, the cluster's status.lastVerifiedBackup, the BackupVerified condition, an
// Event and metrics; the pod and the claim are then deleted.
//
// It writes the cluster's status under a field manager of its own, and the cluster controller
// leaves BackupVerified to it. Like a CronJob it keeps no memory: when the schedule last ran is
// status.restoreDrill.startedAt, and the drill under way is its pod (named after the cluster), so
// a restarted operator picks up where the last one was.
import type { V1Pod } from '@kubernetes/client-node';
import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import {
  AlreadyExistsError,
  builtin,
  Gauge,
  generationChanged,
  isBeingDeleted,
  KubeClient,
  mapToLabelledOwner,
  NotFoundError,
  setCondition,
  watch,
  type Condition,
  type Controller,
  type Manager,
  type ReconcileContext,
  type ReconcileResult,
} from '@homeostat/reconcile';
import { drillTarget, scheduleDecision } from '@homeostat/operator-kit/schedule';
import { postgresBackups, type PostgresBackupStatusFields } from '../../api/postgres-backup-types.ts';
import {
  conditionTypes,
  postgresClusters,
  type PostgresCluster,
  type PostgresClusterStatusFields,
} from '../../api/postgres-cluster-types.ts';
import type { MajorVersion } from '../../api/postgres-versions.ts';
import {
  drillClaim,
  drilledBackupAnnotation,
  drillLabel,
  drillName,
  drillPod,
  drillSelector,
} from './drill-pod.ts';
import { drillableBackups } from './drillable-backups.ts';

/** The field manager of the drill's status fields and its condition. */
export const drillFieldManager = 'postgres-operator-restore-drill';

export interface RestoreDrillControllerOptions {
  readonly imageFor: (version: MajorVersion) => string;
  /** The clock (tests move the schedule instead of waiting for it). */
  readonly now?: () => Date;
  /** How often a cluster waiting for its next drill looks at the clock again, in ms (default 60 s). */
  readonly pollIntervalMs?: number;
  readonly maxConcurrentReconciles?: number;
}

/** What the drill pod reports (its termination message), checked before it is believed. */
const DrillResult = Type.Object({
  backup: Type.String(),
  restoredTo: Type.String(),
  replayedThrough: Type.String(),
  archiveEnd: Type.String(),
  restoreSeconds: Type.Integer({ minimum: 0 }),
  databases: Type.Array(
    Type.Object({
      name: Type.String(),
      tables: Type.Integer({ minimum: 0 }),
      rows: Type.Integer({ minimum: 0 }),
    }),
  ),
});
type DrillResult = Static<typeof DrillResult>;

function parseResult(message: string): DrillResult | undefined {
  try {
    const parsed: unknown = JSON.parse(message);
    return Value.Check(DrillResult, parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

class DrillMetrics {
  readonly #verifiedAt: Gauge;
  readonly #restoreSeconds: Gauge;
  readonly #failing: Gauge;
  constructor(manager: Manager) {
    const gauge = (name: string, help: string) =>
      new Gauge({ name, help, labelNames: ['namespace', 'cluster'], registers: [manager.metrics.registry] });
    this.#verifiedAt = gauge(
      'homeostat_postgres_backup_verified_timestamp_seconds',
      'When a restore drill last restored and checked a backup of the cluster (Unix seconds): alert when it grows old',
    );
    this.#restoreSeconds = gauge(
      'homeostat_postgres_restore_drill_duration_seconds',
      "The last successful drill's restore and replay time: a restore's recovery time (RTO), measured",
    );
    this.#failing = gauge(
      'homeostat_postgres_restore_drill_failing',
      '1 when the last restore drill failed, else 0',
    );
  }
  passed(namespace: string, cluster: string, at: Date, seconds: number): void {
    this.#verifiedAt.set({ namespace, cluster }, at.getTime() / 1000);
    this.#restoreSeconds.set({ namespace, cluster }, seconds);
    this.#failing.set({ namespace, cluster }, 0);
  }
  failed(namespace: string, cluster: string): void {
    this.#failing.set({ namespace, cluster }, 1);
  }
  forget(namespace: string, cluster: string): void {
    for (const g of [this.#verifiedAt, this.#restoreSeconds, this.#failing]) g.remove({ namespace, cluster });
  }
}

type StatusPart = Pick<PostgresClusterStatusFields, 'lastVerifiedBackup' | 'restoreDrill' | 'conditions'>;

/**
 * Applies the drill's part of the status (its fields and its condition) to this incarnation. A
 * field this writer leaves out of an apply is removed, so what `part` does not change is carried.
 */
async function writeStatus(
  client: KubeClient,
  cluster: PostgresCluster,
  part: Omit<StatusPart, 'conditions'>,
  condition: Omit<Condition, 'type' | 'lastTransitionTime' | 'observedGeneration'>,
  now: Date,
): Promise<void> {
  const previous = cluster.status?.conditions?.filter((c) => c.type === conditionTypes.backupVerified);
  const conditions = setCondition(
    previous,
    { type: conditionTypes.backupVerified, ...condition },
    cluster.metadata?.generation,
    now,
  );
  await client.applyStatus(postgresClusters, {
    metadata: {
      name: cluster.metadata?.name ?? '',
      namespace: cluster.metadata?.namespace ?? '',
      uid: cluster.metadata?.uid ?? '',
    },
    status: {
      ...(cluster.status?.restoreDrill ? { restoreDrill: cluster.status.restoreDrill } : {}),
      ...(cluster.status?.lastVerifiedBackup
        ? { lastVerifiedBackup: cluster.status.lastVerifiedBackup }
        : {}),
      ...part,
      conditions,
    },
  });
}

/**
 * Records the drill's result on the PostgreSQLBackup it restored (its verification, under the
 * drill's field manager); nothing when that backup is gone (deleted by hand meanwhile: retention
 * keeps a backup a drill restores).
 */
async function recordOnBackup(
  client: KubeClient,
  namespace: string,
  backupName: string | undefined,
  verification: NonNullable<PostgresBackupStatusFields['verification']>,
): Promise<void> {
  if (!backupName) return;
  await client
    .applyStatus(postgresBackups, { metadata: { name: backupName, namespace }, status: { verification } })
    .catch((error: unknown) => {
      if (!(error instanceof NotFoundError)) throw error;
    });
}

export function addRestoreDrillController(
  manager: Manager,
  options: RestoreDrillControllerOptions,
): Controller<PostgresCluster> {
  const pods = manager.cache.informer(builtin.pods, { labelSelector: drillSelector });
  const claims = manager.cache.informer(builtin.persistentVolumeClaims, { labelSelector: drillSelector });
  const backups = manager.cache.informer(postgresBackups);
  const metrics = new DrillMetrics(manager);
  const clock = options.now ?? (() => new Date());

  const remove = async (
    ctx: ReconcileContext,
    type: typeof builtin.pods | typeof builtin.persistentVolumeClaims,
    namespace: string,
    name: string,
  ) => {
    await ctx.client.delete(type, name, namespace).catch((error: unknown) => {
      if (!(error instanceof NotFoundError)) throw error;
    });
  };
  const ofCluster = <T extends { metadata?: { namespace?: string; labels?: Record<string, string> } }>(
    objects: readonly T[],
    namespace: string,
    name: string,
  ) => objects.filter((o) => o.metadata?.namespace === namespace && o.metadata.labels?.[drillLabel] === name);

  return manager.controller({
    name: 'postgresql-restore-drill',
    for: postgresClusters,
    watches: [
      watch({ type: builtin.pods, labelSelector: drillSelector, map: mapToLabelledOwner(drillLabel) }),
      watch({
        type: builtin.persistentVolumeClaims,
        labelSelector: drillSelector,
        map: mapToLabelledOwner(drillLabel),
      }),
    ],
    // The cluster's status changes with every probe; the schedule runs on timers instead.
    predicates: [generationChanged],
    maxConcurrentReconciles: options.maxConcurrentReconciles ?? 1,
    async reconcile({ namespace = 'default', name, object }, ctx): Promise<ReconcileResult> {
      if (!object || isBeingDeleted(object)) {
        metrics.forget(namespace, name);
        return {};
      }
      const cluster = await ctx.client.get(postgresClusters, name, namespace);
      const client = new KubeClient(ctx.client.transport, { fieldManager: drillFieldManager }).withSignal(
        ctx.signal,
      );
      const drillPods = ofCluster(pods.store.list(), namespace, name).filter(
        (p) => !p.metadata?.deletionTimestamp,
      );
      const finishedPod = drillPods.find(
        (p) => p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed',
      );
      const runningPod = drillPods.find((p) => p !== finishedPod);
      const verify = cluster.spec.backup?.verify;
      const backupSpec = cluster.spec.backup;
      const now = clock();
      /** A failed drill, recorded on its backup and the cluster, said as a Warning. */
      const fail = async (pod: V1Pod, reason: 'DrillFailed' | 'DrillTimedOut', text: string) => {
        const message = text.slice(0, 1024);
        const drilled = pod.metadata?.annotations?.[drilledBackupAnnotation];
        await recordOnBackup(client, namespace, drilled, {
          result: 'Failed',
          drilledAt: now.toISOString(),
          reason,
          message,
        });
        const drill = cluster.status?.restoreDrill;
        await writeStatus(
          client,
          cluster,
          { restoreDrill: drill ? { startedAt: drill.startedAt } : { startedAt: now.toISOString() } },
          { status: 'False', reason, message },
          now,
        );
        metrics.failed(namespace, name);
        await ctx.events.warning(cluster, 'BackupVerificationFailed', 'RestoreDrill', message);
      };

      const pod: V1Pod | undefined = finishedPod;
      if (pod?.status?.phase === 'Succeeded' || pod?.status?.phase === 'Failed') {
        const message = pod.status.containerStatuses?.[0]?.state?.terminated?.message?.trim() ?? '';
        const result = pod.status.phase === 'Succeeded' ? parseResult(message) : undefined;
        const drill = cluster.status?.restoreDrill;
        const started = drill ? { startedAt: drill.startedAt } : { startedAt: now.toISOString() };
        const drilled = pod.metadata?.annotations?.[drilledBackupAnnotation];
        if (result) {
          await recordOnBackup(client, namespace, drilled, {
            result: 'Verified',
            drilledAt: now.toISOString(),
            restoreSeconds: result.restoreSeconds,
          });
          // A copy with no transaction replayed is as old as its backup: the drill's start bounds it.
          const restorePoint = result.restoredTo ? new Date(result.restoredTo) : new Date(started.startedAt);
          await writeStatus(
            client,
            cluster,
            {
              restoreDrill: started,
              lastVerifiedBackup: {
                backup: result.backup,
                verifiedAt: now.toISOString(),
                restorePoint: restorePoint.toISOString(),
                restoreSeconds: result.restoreSeconds,
                recoveryPointSeconds: Math.max(
                  0,
                  Math.round((now.getTime() - restorePoint.getTime()) / 1000),
                ),
                replayedThrough: result.replayedThrough,
                databases: result.databases.slice(0, 20),
              },
            },
            {
              status: 'True',
              reason: 'DrillSucceeded',
              message: `backup ${result.backup} and the WAL archived after it (through ${result.replayedThrough}) restored in ${result.restoreSeconds} s; every table and index sound`,
            },
            now,
          );
          metrics.passed(namespace, name, now, result.restoreSeconds);
          await ctx.events.normal(
            cluster,
            'BackupVerified',
            'RestoreDrill',
            `restore drill: backup ${result.backup} restored to ${result.restoredTo || 'its end'} in ${result.restoreSeconds} s and checked`,
          );
        } else {
          const reason =
            message ||
            `the drill pod ${pod.metadata?.name ?? ''} ${pod.status.phase === 'Succeeded' ? 'reported nothing readable' : 'failed'}`;
          await fail(pod, 'DrillFailed', reason);
        }
        await remove(ctx, builtin.pods, namespace, pod.metadata?.name ?? '');
        await remove(ctx, builtin.persistentVolumeClaims, namespace, pod.metadata?.name ?? '');
        return {};
      }
      if (runningPod) {
        // Under way: its end wakes this cluster, unless it never ends (a pod that cannot be
        // scheduled, an image that cannot be pulled, a restore that hangs), which the timeout does.
        const timeoutSeconds = verify?.timeoutSeconds ?? defaultDrillTimeoutSeconds;
        const left = drillStartOf(cluster, runningPod, now) + timeoutSeconds * 1000 - now.getTime();
        if (left > 0) return { requeueAfterMs: Math.min(left, options.pollIntervalMs ?? 60_000) };
        const status = runningPod.status;
        await fail(
          runningPod,
          'DrillTimedOut',
          `not done after ${timeoutSeconds} s (spec.backup.verify.timeoutSeconds): pod ${runningPod.metadata?.name ?? ''} is ${status?.phase ?? 'Pending'}${status?.message ? `: ${status.message}` : ''}`,
        );
        await remove(ctx, builtin.pods, namespace, runningPod.metadata?.name ?? '');
        await remove(ctx, builtin.persistentVolumeClaims, namespace, runningPod.metadata?.name ?? '');
        return {};
      }
      // Claims of drills whose pods are gone (deleted above, or by hand).
      for (const claim of ofCluster(claims.store.list(), namespace, name)) {
        if (!claim.metadata?.deletionTimestamp) {
          await remove(ctx, builtin.persistentVolumeClaims, namespace, claim.metadata?.name ?? '');
        }
      }
      if (!verify || !backupSpec) return {};

      // The schedule's last run is the last drill's start (the cluster's creation before any).
      const last = new Date(
        cluster.status?.restoreDrill?.startedAt ?? cluster.metadata?.creationTimestamp ?? 0,
      ).getTime();
      let decision;
      try {
        decision = scheduleDecision(verify.schedule, now, last);
      } catch {
        await writeStatus(
          client,
          cluster,
          {},
          {
            status: 'False',
            reason: 'InvalidSchedule',
            message: `backup.verify.schedule '${verify.schedule}' is not a cron schedule`,
          },
          now,
        );
        return {};
      }
      if (!decision.due) {
        const wait = decision.next.getTime() - now.getTime() + 1000;
        return { requeueAfterMs: Math.min(wait, options.pollIntervalMs ?? 60_000) };
      }
      const target = drillTarget(
        drillableBackups(backups.store.list(), namespace, cluster.metadata?.uid ?? ''),
      );
      if (!target.backup) {
        // The schedule moves on: the next run looks again.
        await writeStatus(
          client,
          cluster,
          { restoreDrill: { startedAt: now.toISOString() } },
          {
            status: 'False',
            reason: 'NoBackup',
            message:
              'no base backup of this cluster to verify yet: create a PostgreSQLBackup (or a schedule)',
          },
          now,
        );
        return { requeueAfterMs: options.pollIntervalMs ?? 60_000 };
      }
      const image = cluster.spec.image ?? options.imageFor(cluster.spec.postgresVersion);
      const ignoreExisting = (error: unknown) => {
        if (!(error instanceof AlreadyExistsError)) throw error;
      };
      const drill = drillName(name, now);
      await client.create(builtin.persistentVolumeClaims, drillClaim(cluster, drill)).catch(ignoreExisting);
      const restored = {
        backupName: target.backup.metadata?.name ?? '',
        label: target.backup.status?.label ?? '',
      };
      await client
        .create(builtin.pods, drillPod(cluster, drill, backupSpec, image, restored))
        .catch(ignoreExisting);
      await writeStatus(
        client,
        cluster,
        { restoreDrill: { startedAt: now.toISOString(), pod: drill } },
        {
          status: findVerified(cluster)?.status ?? 'Unknown',
          reason: 'DrillRunning',
          message: `restore drill of backup ${restored.label} under way in pod ${drill}`,
        },
        now,
      );
      await ctx.events.normal(
        cluster,
        'RestoreDrillStarted',
        'RestoreDrill',
        `restore drill of backup ${restored.label} (PostgreSQLBackup ${restored.backupName}) started in pod ${drill}${target.undrilled > 1 ? `; ${target.undrilled - 1} more never drilled` : ''}`,
      );
      return {};
    },
  });
}

/** How long a drill may run when spec.backup.verify.timeoutSeconds says nothing (the CRD's default). */
const defaultDrillTimeoutSeconds = 21600;

/**
 * When the drill of `pod` started, by the operator's clock: the start it recorded for that pod,
 * else (an operator that lost the write) the pod's creation.
 */
function drillStartOf(cluster: PostgresCluster, pod: V1Pod, now: Date): number {
  const drill = cluster.status?.restoreDrill;
  if (drill?.pod === pod.metadata?.name && drill?.startedAt) return Date.parse(drill.startedAt);
  const created = pod.metadata?.creationTimestamp;
  return created ? new Date(created).getTime() : now.getTime();
}

const findVerified = (cluster: PostgresCluster) =>
  cluster.status?.conditions?.find((c) => c.type === conditionTypes.backupVerified);
