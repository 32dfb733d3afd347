// @homeostat/operator-kit/schedule: cron schedules of backups, which backup a restore drill proves,
// and which backups a running drill holds, shared by the operators that take and drill backups.
export { scheduleDecision, scheduledAtOf, scheduledName, type ScheduleDecision } from './scheduled-runs.ts';
export { drillTarget, type DrillableBackup, type DrillTarget } from './drill-target.ts';
export { backupsHeldByDrills, type DrillPodMarks } from './drill-holds.ts';
