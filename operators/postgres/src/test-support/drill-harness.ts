// What the restore-drill tests on a pod cluster share: the operator's clock moved to the drill
// schedule's next run, SQL on the primary, a WAL segment switched and archived, a backup taken, the
// BackupVerified condition and a backup's verification read back.
import { waitUntil } from '@homeostat/testing';
import { builtin, findCondition, type KubeClient } from '@homeostat/reconcile';
import { scheduleDecision } from '@homeostat/operator-kit/schedule';
import { postgresBackups, type PostgresBackup } from '../api/postgres-backup-types.ts';
import type { PostgresCluster } from '../api/postgres-cluster-types.ts';
import { drillSelector } from '../controllers/backup/drill-pod.ts';
import { defaultConnectOptions, withConnection } from '../instance/instance.ts';
import type { PodProcesses } from './pod-processes.ts';

export interface DrillHarnessInputs {
  readonly client: KubeClient;
  readonly namespace: string;
  readonly cluster: string;
  /** The drill schedule (cron), one that never comes due on its own. */
  readonly schedule: string;
  readonly pods: PodProcesses;
  readonly get: () => Promise<PostgresCluster>;
  readonly slow: Parameters<typeof waitUntil>[2];
}

export function drillHarness({ client, namespace, cluster, schedule, pods, get, slow }: DrillHarnessInputs) {
  let clockOffsetMs = 0;
  /** The operator's clock: give it as the drill controller's `now`. */
  const now = () => new Date(Date.now() + clockOffsetMs);
  /** Moves the operator's clock past the schedule's next run after the last drill. */
  const nextDrillDue = async () => {
    const status = (await get()).status;
    const from = new Date(status?.restoreDrill?.startedAt ?? Date.now() + clockOffsetMs);
    const next = scheduleDecision(schedule, from, from.getTime()).next;
    clockOffsetMs = next.getTime() - Date.now() + 60_000;
  };
  /** Moves the operator's clock on by `ms`. */
  const advance = (ms: number) => {
    clockOffsetMs += ms;
  };
  const sql = async <T extends Record<string, unknown>>(text: string, instance?: string) => {
    const target = instance ?? (await get()).status?.currentPrimary ?? '';
    return withConnection(
      pods.endpoint(target),
      pods.bed.superuser,
      defaultConnectOptions,
      async (c) => (await c.query<T>(text)).rows,
    );
  };
  const switchAndArchive = async () => {
    await sql("INSERT INTO marks(label) VALUES ('row ' || clock_timestamp())");
    const [row] = await sql<{ walfile: string }>('SELECT pg_walfile_name(pg_switch_wal()) AS walfile');
    const segment = row?.walfile ?? '';
    await waitUntil(
      `segment ${segment} archived`,
      async () => ((await get()).status?.backup?.lastArchivedWal ?? '') >= segment,
      slow,
    );
    return segment;
  };
  const verified = async () => findCondition((await get()).status?.conditions, 'BackupVerified');
  const takeBackup = async (name: string) => {
    await client.create(postgresBackups, {
      metadata: { name, namespace },
      spec: { clusterName: cluster },
    } as unknown as PostgresBackup);
    await waitUntil(
      `backup ${name} taken`,
      async () => (await client.get(postgresBackups, name, namespace)).status?.phase === 'Succeeded',
      slow,
    );
    return (await client.get(postgresBackups, name, namespace)).status?.label ?? '';
  };
  const verification = async (name: string) =>
    (await client.get(postgresBackups, name, namespace)).status?.verification;
  /** The drill pods not being deleted. */
  const drillPods = async () =>
    (await client.list(builtin.pods, { namespace, labelSelector: drillSelector })).items.filter(
      (p) => !p.metadata?.deletionTimestamp,
    );
  return { now, nextDrillDue, advance, sql, switchAndArchive, verified, takeBackup, verification, drillPods };
}
