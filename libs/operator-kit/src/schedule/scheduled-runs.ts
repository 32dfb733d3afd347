// When a scheduled backup is due, and what it is called: the part of a backup schedule every
// operator shares. Like a CronJob's, the schedule remembers nothing in memory: the last run is read
// back from the API server (the newest scheduled object's scheduled-at annotation), and each run's
// name comes from its scheduled time, so a restarted operator neither misses nor repeats a run. A
// run missed while the operator was down is taken once, late; older missed runs are skipped.
import { CronExpressionParser } from 'cron-parser';

/** `<owner>-<yyyymmddhhmm>` in UTC: one name per scheduled time (to the minute, cron's grain). */
export function scheduledName(owner: string, at: Date): string {
  return `${owner}-${at.toISOString().slice(0, 16).replace(/[-T:]/g, '')}`;
}

/** The scheduled time an object's annotation records, in ms since the epoch; 0 when absent or unreadable. */
export function scheduledAtOf(
  annotations: Readonly<Record<string, string>> | undefined,
  key: string,
): number {
  return Date.parse(annotations?.[key] ?? '') || 0;
}

/** What a schedule asks for at `now`. */
export interface ScheduleDecision {
  /** The run to take now: the latest cron time at or before `now`, when it is later than the last run. */
  readonly due: Date | undefined;
  /** The next cron time after `now`: when to look again. */
  readonly next: Date;
}

/**
 * Decides whether a run is due. `lastRun` is the newest run already made (ms; the owner's creation
 * time when none, so a new schedule does not start with a run for a time before it existed).
 * Throws when `schedule` is not a cron expression.
 */
export function scheduleDecision(schedule: string, now: Date, lastRun: number): ScheduleDecision {
  const times = CronExpressionParser.parse(schedule, { currentDate: now, tz: 'UTC' });
  const latest = times.prev().toDate();
  // prev() moved the iterator back; next() from there is the first time after `now` again.
  const next = times.next().toDate();
  return { due: latest.getTime() > lastRun ? latest : undefined, next };
}
