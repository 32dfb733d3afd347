// @homeostat/operator-kit/schedule: cron schedules of backups, and which backup a restore drill
// proves, shared by the operators that take and drill backups.
export { scheduleDecision, scheduledAtOf, scheduledName, type ScheduleDecision } from './scheduled-runs.ts';
export { drillTarget, type DrillableBackup, type DrillTarget } from './drill-target.ts';
