// Restore drills (spec.backup.verify, ADR 0218): on the cluster's schedule, a pod with a claim of
// its own restores a base backup (the newest never drilled, else the newest: drillTarget, shared
// in @homeostat/operator-kit/schedule) and every WAL segment archived after it, and checks the
// copy (drill-pod.ts, the entrypoint's run_drill); the result becomes the backup's
// status.verification, the cluster's status.lastVerifiedBackup, the BackupVerified condition, an
// Event and metrics; the pod and the claim are then deleted (restore-drill-round.ts, step by step).
//
// It writes the cluster's status under a field manager of its own, and the cluster controller
// leaves BackupVerified to it. Like a CronJob it keeps no memory: when the schedule last ran is
// status.restoreDrill.startedAt, and the drill under way is its pod (named after the cluster), so
// a restarted operator picks up where the last one was.
import {
  builtin,
  generationChanged,
  isBeingDeleted,
  mapToLabelledOwner,
  watch,
  type Controller,
  type Manager,
  type ReconcileResult,
} from '@homeostat/reconcile';
import { postgresBackups } from '../../api/postgres-backup-types.ts';
import { postgresClusters, type PostgresCluster } from '../../api/postgres-cluster-types.ts';
import type { MajorVersion } from '../../api/postgres-versions.ts';
import { DrillMetrics } from './drill-metrics.ts';
import { drillLabel, drillSelector } from './drill-pod.ts';
import { DrillRound, type DrillRoundDeps } from './restore-drill-round.ts';
import { defaultConnectOptions, type ConnectOptions } from '../../instance/instance.ts';
import { instanceAccess, ofClusterByName, type InstanceEndpointOf } from '../instance-access.ts';
import { managedSelector } from '../operand-labels.ts';

export interface RestoreDrillControllerOptions {
  readonly imageFor: (version: MajorVersion) => string;
  /** Where the operator reaches an instance to count the source; default its DNS name. */
  readonly instanceEndpoint?: InstanceEndpointOf;
  /** Timeouts of the connections that count the source (the count's bound is countTimeoutMs). */
  readonly connect?: ConnectOptions;
  /** The longest the source's count may keep a standby's replay paused, in ms (default 10 min). */
  readonly countTimeoutMs?: number;
  /** The longest the primary may take to archive the segment holding L, in ms (default 2 min). */
  readonly archiveTimeoutMs?: number;
  /** The clock (tests move the schedule instead of waiting for it). */
  readonly now?: () => Date;
  /** How often a cluster waiting for its next drill looks at the clock again, in ms (default 60 s). */
  readonly pollIntervalMs?: number;
  readonly maxConcurrentReconciles?: number;
}

type Labelled = { metadata?: { namespace?: string; labels?: Record<string, string> } };

/** The drill objects of one cluster, by the label every drill pod and claim carries. */
function ofCluster<T extends Labelled>(objects: readonly T[], namespace: string, name: string): T[] {
  return objects.filter(
    (o) => o.metadata?.namespace === namespace && o.metadata.labels?.[drillLabel] === name,
  );
}

export function addRestoreDrillController(
  manager: Manager,
  options: RestoreDrillControllerOptions,
): Controller<PostgresCluster> {
  const pods = manager.cache.informer(builtin.pods, { labelSelector: drillSelector });
  const claims = manager.cache.informer(builtin.persistentVolumeClaims, { labelSelector: drillSelector });
  const backups = manager.cache.informer(postgresBackups);
  // The instances' pods and the operator's Secrets, as the cluster controller caches them (the
  // same informers): the source is counted over the operator's own access to its instances.
  const instancePods = manager.cache.informer(builtin.pods, { labelSelector: managedSelector });
  const secrets = manager.cache.informer(builtin.secrets, { labelSelector: managedSelector });
  const metrics = new DrillMetrics(manager);
  const clock = options.now ?? (() => new Date());
  const deps: DrillRoundDeps = {
    imageFor: options.imageFor,
    metrics,
    pollIntervalMs: options.pollIntervalMs ?? 60_000,
    access: (cluster) => {
      const namespace = cluster.metadata?.namespace ?? 'default';
      const name = cluster.metadata?.name ?? '';
      return instanceAccess(
        cluster,
        ofClusterByName(instancePods.store.byIndex('namespace', namespace), name),
        ofClusterByName(secrets.store.byIndex('namespace', namespace), name),
        options.connect ?? defaultConnectOptions,
        options.instanceEndpoint,
      );
    },
    countBounds: {
      countTimeoutMs: options.countTimeoutMs ?? 600_000,
      archiveTimeoutMs: options.archiveTimeoutMs ?? 120_000,
    },
  };

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
      const round = new DrillRound(ctx, cluster, clock(), deps);
      const drillPods = ofCluster(pods.store.list(), namespace, name).filter(
        (p) => !p.metadata?.deletionTimestamp,
      );
      const finished = drillPods.find((p) => p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed');
      if (finished) {
        await round.recordFinished(finished);
        return {};
      }
      const running = drillPods[0];
      if (running) return round.superviseRunning(running);
      await round.removeClaims(ofCluster(claims.store.list(), namespace, name));
      return round.startWhenDue(backups.store.list());
    },
  });
}
