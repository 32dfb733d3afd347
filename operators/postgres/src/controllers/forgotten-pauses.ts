// A standby whose replay stays paused falls behind with every commit and keeps every WAL segment it
// has not replayed on its own disk. Only a restore drill's count pauses one (ADR 0221), for at most
// its bound, and resumes it; a count that never ended (its operator stopped mid-way, and no drill
// came due after: spec.backup.verify removed) would leave the pause for good. The cluster
// controller, which sees every replica's replay state on each probe, resumes a replay seen paused
// for longer than any count may take.
import type { ReconcileContext } from '@homeostat/reconcile';
import type { PostgresCluster } from '../api/postgres-cluster-types.ts';
import type { ClusterView } from '../failover/cluster-view.ts';
import { errorMessage } from '../instance/instance.ts';
import { resumeReplay } from '../instance/row-counts.ts';
import type { InstanceAccess } from './instance-access.ts';

/**
 * How long a replay may stay paused before the cluster controller resumes it: above the drill
 * count's default bound (10 min), so a count under way is never cut short.
 */
export const defaultPausedReplayGraceMs = 15 * 60_000;

/**
 * The replicas to resume at `now`: those seen paused, without a break, for `graceMs` or more.
 * `since` (when each was first seen paused) is updated: a replica seen replaying is forgotten, and
 * one to resume is timed again from now.
 */
export function pausesToResume(
  since: Map<string, number>,
  view: ClusterView,
  now: number,
  graceMs: number,
): string[] {
  const paused = new Set(
    view.instances
      .map((i) => i.status)
      .filter((s) => s.reachable && s.role === 'replica' && s.replayPaused)
      .map((s) => s.name),
  );
  for (const name of since.keys()) if (!paused.has(name)) since.delete(name);
  const due: string[] = [];
  for (const name of paused) {
    const first = since.get(name);
    if (first === undefined) since.set(name, now);
    else if (now - first >= graceMs) {
      due.push(name);
      since.set(name, now);
    }
  }
  return due.sort();
}

/** Resumes the replays `pausesToResume` names, each with a Warning Event; a failure is logged. */
export async function resumeForgottenPauses(
  cluster: PostgresCluster,
  due: readonly string[],
  graceMs: number,
  access: InstanceAccess,
  ctx: ReconcileContext,
): Promise<void> {
  for (const name of due) {
    try {
      if (!(await resumeReplay(access.endpointOf(name), access.credentials, access.connect))) continue;
      await ctx.events.warning(
        cluster,
        'ReplayResumed',
        'ResumeReplay',
        `the replay of ${name} was paused for over ${Math.round(graceMs / 1000)} s with no restore drill count under way: resumed`,
      );
    } catch (error) {
      ctx.log.warn({ instance: name, err: errorMessage(error) }, 'resuming a paused replay failed');
    }
  }
}
