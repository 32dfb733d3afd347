// @homeostat/operator-kit/schedule: cron schedules of backups, shared by the operators that take them.
export { scheduleDecision, scheduledAtOf, scheduledName, type ScheduleDecision } from './scheduled-runs.ts';
