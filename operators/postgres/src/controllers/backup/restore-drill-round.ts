// One reconcile of one cluster's restore drills (restore-drill-controller.ts runs them in order):
// a drill that ended is recorded (on its backup, the cluster's status, an Event, the metrics) and
// removed; one still running is left alone until its timeout; claims of drills whose pods are
// gone are removed; and when the schedule is due, the next drill starts.
import type { V1Pod } from '@kubernetes/client-node';
import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import {
  AlreadyExistsError,
  builtin,
  KubeClient,
  NotFoundError,
  setCondition,
  type Condition,
  type ReconcileContext,
  type ReconcileResult,
} from '@homeostat/reconcile';
import { drillTarget, scheduleDecision } from '@homeostat/operator-kit/schedule';
import {
  postgresBackups,
  type PostgresBackup,
  type PostgresBackupStatusFields,
} from '../../api/postgres-backup-types.ts';
import {
  conditionTypes,
  postgresClusters,
  type PostgresCluster,
  type PostgresClusterStatusFields,
} from '../../api/postgres-cluster-types.ts';
import type { MajorVersion } from '../../api/postgres-versions.ts';
import type { DrillMetrics } from './drill-metrics.ts';
import { parseLsn } from '../../instance/lsn.ts';
import type { InstanceAccess } from '../instance-access.ts';
import {
  compareCounts,
  parseSourceCounts,
  sourceCountsAnnotation,
  type Comparison,
} from './compare-counts.ts';
import { drillClaim, drilledBackupAnnotation, drillName, drillPod } from './drill-pod.ts';
import { countSource, type SourceCountBounds } from './source-counts.ts';
import { drillableBackups } from './drillable-backups.ts';

/** The field manager of the drill's status fields and its condition. */
export const drillFieldManager = 'postgres-operator-restore-drill';

/** What the drill pod reports (its termination message), checked before it is believed. */
const DrillResult = Type.Object({
  backup: Type.String(),
  restoredTo: Type.String(),
  replayedThrough: Type.String(),
  archiveEnd: Type.String(),
  restoreSeconds: Type.Integer({ minimum: 0 }),
  /** Where the databases were counted: L when the pod was given one (ADR 0221), else absent. */
  countedAt: Type.Optional(Type.String()),
  databases: Type.Array(
    Type.Object({
      name: Type.String(),
      tables: Type.Integer({ minimum: 0 }),
      rows: Type.Integer({ minimum: 0 }),
      digest: Type.Optional(Type.String()),
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

/**
 * What every round needs beyond the cluster: the image, the metrics, how often to look again, and
 * how to reach the cluster's instances to count the source (with the count's bounds).
 */
export interface DrillRoundDeps {
  readonly imageFor: (version: MajorVersion) => string;
  readonly metrics: DrillMetrics;
  readonly pollIntervalMs: number;
  readonly access: (cluster: PostgresCluster) => InstanceAccess | undefined;
  readonly countBounds: SourceCountBounds;
}

/** One reconcile of a cluster's drills, at `now`; each step writes under the drill's field manager. */
export class DrillRound {
  readonly #ctx: ReconcileContext;
  readonly #client: KubeClient;
  readonly #cluster: PostgresCluster;
  readonly #now: Date;
  readonly #deps: DrillRoundDeps;
  readonly #namespace: string;
  readonly #name: string;

  constructor(ctx: ReconcileContext, cluster: PostgresCluster, now: Date, deps: DrillRoundDeps) {
    this.#ctx = ctx;
    this.#client = new KubeClient(ctx.client.transport, { fieldManager: drillFieldManager }).withSignal(
      ctx.signal,
    );
    this.#cluster = cluster;
    this.#now = now;
    this.#deps = deps;
    this.#namespace = cluster.metadata?.namespace ?? '';
    this.#name = cluster.metadata?.name ?? '';
  }

  /** A drill pod that ended: its result recorded (a pass, or a failure with why), then removed. */
  async recordFinished(pod: V1Pod): Promise<void> {
    const message = pod.status?.containerStatuses?.[0]?.state?.terminated?.message?.trim() ?? '';
    const result = pod.status?.phase === 'Succeeded' ? parseResult(message) : undefined;
    if (result) {
      // The source's counts at L travel on the pod: an operator restarted meanwhile compares too.
      const source = parseSourceCounts(pod.metadata?.annotations?.[sourceCountsAnnotation]);
      const comparison = compareCounts(source, result);
      if (comparison.result === 'Differ') await this.#recordFailed(pod, 'CountsDiffer', comparison.message);
      else await this.#recordPassed(pod, result, comparison);
    } else {
      const reason =
        message ||
        `the drill pod ${pod.metadata?.name ?? ''} ${pod.status?.phase === 'Succeeded' ? 'reported nothing readable' : 'failed'}`;
      await this.#recordFailed(pod, 'DrillFailed', reason);
    }
    await this.#remove(pod.metadata?.name ?? '');
  }

  /**
   * A drill under way: its end wakes this cluster, unless it never ends (a pod that cannot be
   * scheduled, an image that cannot be pulled, a restore that hangs), which the timeout does.
   */
  async superviseRunning(pod: V1Pod): Promise<ReconcileResult> {
    const timeoutSeconds = this.#cluster.spec.backup?.verify?.timeoutSeconds ?? defaultDrillTimeoutSeconds;
    const left = drillStartOf(this.#cluster, pod, this.#now) + timeoutSeconds * 1000 - this.#now.getTime();
    if (left > 0) return { requeueAfterMs: Math.min(left, this.#deps.pollIntervalMs) };
    const status = pod.status;
    await this.#recordFailed(
      pod,
      'DrillTimedOut',
      `not done after ${timeoutSeconds} s (spec.backup.verify.timeoutSeconds): pod ${pod.metadata?.name ?? ''} is ${status?.phase ?? 'Pending'}${status?.message ? `: ${status.message}` : ''}`,
    );
    await this.#remove(pod.metadata?.name ?? '');
    return {};
  }

  /** Claims of drills whose pods are gone (removed by a round, or deleted by hand). */
  async removeClaims(
    claims: readonly { metadata?: { name?: string; deletionTimestamp?: Date } }[],
  ): Promise<void> {
    for (const claim of claims) {
      if (!claim.metadata?.deletionTimestamp)
        await this.#delete(builtin.persistentVolumeClaims, claim.metadata?.name ?? '');
    }
  }

  /** Starts the next drill when the schedule is due and a backup exists; says when to look again. */
  async startWhenDue(backups: readonly PostgresBackup[]): Promise<ReconcileResult> {
    const backupSpec = this.#cluster.spec.backup;
    const verify = backupSpec?.verify;
    if (!verify || !backupSpec) return {};
    // The schedule's last run is the last drill's start (the cluster's creation before any).
    const last = new Date(
      this.#cluster.status?.restoreDrill?.startedAt ?? this.#cluster.metadata?.creationTimestamp ?? 0,
    ).getTime();
    let decision;
    try {
      decision = scheduleDecision(verify.schedule, this.#now, last);
    } catch {
      await this.#writeStatus(
        {},
        {
          status: 'False',
          reason: 'InvalidSchedule',
          message: `backup.verify.schedule '${verify.schedule}' is not a cron schedule`,
        },
      );
      return {};
    }
    if (!decision.due) {
      const wait = decision.next.getTime() - this.#now.getTime() + 1000;
      return { requeueAfterMs: Math.min(wait, this.#deps.pollIntervalMs) };
    }
    const target = drillTarget(drillableBackups(backups, this.#namespace, this.#cluster.metadata?.uid ?? ''));
    if (!target.backup) {
      // The schedule moves on: the next run looks again.
      await this.#writeStatus(
        { restoreDrill: { startedAt: this.#now.toISOString() } },
        {
          status: 'False',
          reason: 'NoBackup',
          message: 'no base backup of this cluster to verify yet: create a PostgreSQLBackup (or a schedule)',
        },
      );
      return { requeueAfterMs: this.#deps.pollIntervalMs };
    }
    const image = this.#cluster.spec.image ?? this.#deps.imageFor(this.#cluster.spec.postgresVersion);
    const ignoreExisting = (error: unknown) => {
      if (!(error instanceof AlreadyExistsError)) throw error;
    };
    const drill = drillName(this.#name, this.#now);
    await this.#client
      .create(builtin.persistentVolumeClaims, drillClaim(this.#cluster, drill))
      .catch(ignoreExisting);
    const restored = {
      backupName: target.backup.metadata?.name ?? '',
      label: target.backup.status?.label ?? '',
    };
    // The source's counts at L, before the pod exists (ADR 0221): an operator that stops here
    // finds the schedule still due and counts again, resuming a standby this count left paused.
    const endLsn = target.backup.status?.endLsn;
    const source = await countSource(
      this.#cluster,
      this.#deps.access(this.#cluster),
      endLsn ? parseLsn(endLsn) : undefined,
      this.#deps.countBounds,
      this.#ctx.signal,
      (step) => this.#ctx.log.info({ backup: restored.label }, `restore drill: ${step}`),
    );
    if (!source.compared) this.#ctx.log.info({ reason: source.reason }, 'restore drill counts not compared');
    await this.#client
      .create(builtin.pods, drillPod(this.#cluster, drill, backupSpec, image, restored, source))
      .catch(ignoreExisting);
    await this.#writeStatus(
      { restoreDrill: { startedAt: this.#now.toISOString(), pod: drill } },
      {
        status: findVerified(this.#cluster)?.status ?? 'Unknown',
        reason: 'DrillRunning',
        message: `restore drill of backup ${restored.label} under way in pod ${drill}`,
      },
    );
    await this.#ctx.events.normal(
      this.#cluster,
      'RestoreDrillStarted',
      'RestoreDrill',
      `restore drill of backup ${restored.label} (PostgreSQLBackup ${restored.backupName}) started in pod ${drill}${target.undrilled > 1 ? `; ${target.undrilled - 1} more never drilled` : ''}`,
    );
    return {};
  }

  /** The drill's start as recorded (or now, for a drill this operator never saw start). */
  #started(): { startedAt: string } {
    const drill = this.#cluster.status?.restoreDrill;
    return drill ? { startedAt: drill.startedAt } : { startedAt: this.#now.toISOString() };
  }

  async #recordPassed(
    pod: V1Pod,
    result: DrillResult,
    comparison: Exclude<Comparison, { result: 'Differ' }>,
  ): Promise<void> {
    const now = this.#now;
    const compared =
      comparison.result === 'Equal'
        ? `tables and rows equal to the source's at ${comparison.lsn}`
        : `counts not compared with the source: ${comparison.reason}`;
    await recordOnBackup(
      this.#client,
      this.#namespace,
      pod.metadata?.annotations?.[drilledBackupAnnotation],
      {
        result: 'Verified',
        drilledAt: now.toISOString(),
        restoreSeconds: result.restoreSeconds,
      },
    );
    const started = this.#started();
    // A copy with no transaction replayed is as old as its backup: the drill's start bounds it.
    const restorePoint = result.restoredTo ? new Date(result.restoredTo) : new Date(started.startedAt);
    await this.#writeStatus(
      {
        restoreDrill: started,
        lastVerifiedBackup: {
          backup: result.backup,
          verifiedAt: now.toISOString(),
          restorePoint: restorePoint.toISOString(),
          restoreSeconds: result.restoreSeconds,
          recoveryPointSeconds: Math.max(0, Math.round((now.getTime() - restorePoint.getTime()) / 1000)),
          replayedThrough: result.replayedThrough,
          databases: result.databases.slice(0, 20).map(({ name, tables, rows }) => ({ name, tables, rows })),
          comparedWithSource:
            comparison.result === 'Equal'
              ? { result: 'Equal', lsn: comparison.lsn, standby: comparison.standby }
              : { result: 'NotCompared', reason: comparison.reason.slice(0, 1024) },
        },
      },
      {
        status: 'True',
        reason: 'DrillSucceeded',
        message:
          `backup ${result.backup} and the WAL archived after it (through ${result.replayedThrough}) restored in ${result.restoreSeconds} s; every table and index sound; ${compared}`.slice(
            0,
            1024,
          ),
      },
    );
    this.#deps.metrics.passed(this.#namespace, this.#name, now, result.restoreSeconds);
    await this.#ctx.events.normal(
      this.#cluster,
      'BackupVerified',
      'RestoreDrill',
      `restore drill: backup ${result.backup} restored to ${result.restoredTo || 'its end'} in ${result.restoreSeconds} s and checked; ${compared}`.slice(
        0,
        1024,
      ),
    );
  }

  /** A failed drill, recorded on its backup and the cluster, said as a Warning. */
  async #recordFailed(
    pod: V1Pod,
    reason: 'DrillFailed' | 'DrillTimedOut' | 'CountsDiffer',
    text: string,
  ): Promise<void> {
    const message = text.slice(0, 1024);
    await recordOnBackup(
      this.#client,
      this.#namespace,
      pod.metadata?.annotations?.[drilledBackupAnnotation],
      {
        result: 'Failed',
        drilledAt: this.#now.toISOString(),
        reason,
        message,
      },
    );
    await this.#writeStatus({ restoreDrill: this.#started() }, { status: 'False', reason, message });
    this.#deps.metrics.failed(this.#namespace, this.#name);
    await this.#ctx.events.warning(this.#cluster, 'BackupVerificationFailed', 'RestoreDrill', message);
  }

  #writeStatus(
    part: Omit<StatusPart, 'conditions'>,
    condition: Omit<Condition, 'type' | 'lastTransitionTime' | 'observedGeneration'>,
  ): Promise<void> {
    return writeStatus(this.#client, this.#cluster, part, condition, this.#now);
  }

  /** A drill's pod and its claim (both named after the drill). */
  async #remove(drill: string): Promise<void> {
    await this.#delete(builtin.pods, drill);
    await this.#delete(builtin.persistentVolumeClaims, drill);
  }

  async #delete(
    type: typeof builtin.pods | typeof builtin.persistentVolumeClaims,
    name: string,
  ): Promise<void> {
    await this.#ctx.client.delete(type, name, this.#namespace).catch((error: unknown) => {
      if (!(error instanceof NotFoundError)) throw error;
    });
  }
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
