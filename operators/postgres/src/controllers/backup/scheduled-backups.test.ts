import { describe, expect, it } from 'vitest';
import type { PostgresBackup } from '../../api/postgres-backup-types.ts';
import {
  newestScheduledSuccess,
  retentionDone,
  retentionPlan,
  retentionPolicyOf,
  scheduleStatus,
  unfinishedScheduled,
} from './scheduled-backups.ts';

const day = (d: number, h = 0) => new Date(Date.UTC(2026, 10, d, h));
type Phase = 'Pending' | 'Running' | 'Succeeded' | 'Failed';

/** A backup the schedule made for day `d` (finished an hour later), or one made by hand when `scheduled` is false. */
function backup(d: number, phase: Phase, scheduled = true): PostgresBackup {
  const label = `202611${String(d).padStart(2, '0')}-010000F`;
  return {
    metadata: {
      name: scheduled ? `orders-202611${String(d).padStart(2, '0')}0000` : `by-hand-${d}`,
      uid: `uid-${d}`,
      ...(scheduled
        ? {
            labels: { 'postgres.homeostat.dev/scheduled': 'true' },
            annotations: { 'postgres.homeostat.dev/scheduled-at': day(d).toISOString() },
          }
        : {}),
    },
    spec: { clusterName: 'orders', target: 'PreferStandby' },
    status: {
      phase,
      ...(phase === 'Succeeded' ? { label, finishedAt: day(d, 1).toISOString() } : {}),
    },
  };
}
const names = (list: readonly PostgresBackup[]) => list.map((b) => b.metadata?.name);

describe('retention of scheduled backups', () => {
  it('reads the policy: keepLast as is, maxAge in days from days or hours, 7 newest by default', () => {
    expect(retentionPolicyOf({ keepLast: 3, maxAge: '30d' })).toEqual({ keepLast: 3, maxAgeDays: 30 });
    expect(retentionPolicyOf({ maxAge: '36h' })).toEqual({ maxAgeDays: 1.5 });
    expect(retentionPolicyOf(undefined)).toEqual({ keepLast: 7 });
    expect(retentionPolicyOf({})).toEqual({});
  });

  it('keepLast 2 expires the older successes, oldest first, and keeps every failure newer than the kept', () => {
    const all = [
      backup(1, 'Succeeded'),
      backup(2, 'Failed'),
      backup(3, 'Succeeded'),
      backup(4, 'Succeeded'),
      backup(5, 'Failed'),
      backup(6, 'Succeeded'),
    ];
    const plan = retentionPlan(all, { keepLast: 2 }, day(7));
    expect(names(plan.expire)).toEqual(['orders-202611010000', 'orders-202611030000']);
    expect(names(plan.dropFailed)).toEqual(['orders-202611020000']);
  });

  it('maxAge keeps the window and the backup its start replays from', () => {
    const all = [1, 3, 5, 7, 9].map((d) => backup(d, 'Succeeded'));
    // Window from day 6 (01:00 on day 10 minus 4 days): days 7 and 9 in it, day 5 before it.
    expect(names(retentionPlan(all, { maxAgeDays: 4 }, day(10, 1)).expire)).toEqual([
      'orders-202611010000',
      'orders-202611030000',
    ]);
  });

  it('never expires the newest, nor anything without a policy', () => {
    const all = [backup(1, 'Succeeded'), backup(2, 'Succeeded')];
    expect(names(retentionPlan(all, { maxAgeDays: 0.01 }, day(30)).expire)).toEqual(['orders-202611010000']);
    expect(retentionPlan(all, {}, day(30))).toEqual({ expire: [], held: [], dropFailed: [] });
  });

  it('drops no failure when no success is kept to read instead', () => {
    expect(retentionPlan([backup(1, 'Failed'), backup(2, 'Failed')], { keepLast: 1 }, day(3))).toEqual({
      expire: [],
      held: [],
      dropFailed: [],
    });
  });

  it('keeps for now a backup a running restore drill restores, and the failures older than it', () => {
    const all = [backup(1, 'Succeeded'), backup(2, 'Failed'), backup(3, 'Succeeded'), backup(4, 'Succeeded')];
    const plan = retentionPlan(all, { keepLast: 1 }, day(5), new Set(['orders-202611010000']));
    expect(names(plan.expire)).toEqual(['orders-202611030000']);
    expect(names(plan.held)).toEqual(['orders-202611010000']);
    // Day 1 is still in the repository: the failure after it is not older than every backup kept.
    expect(plan.dropFailed).toEqual([]);
    // The drill over, the next retention expires it with the rest.
    expect(names(retentionPlan(all, { keepLast: 1 }, day(5)).expire)).toEqual([
      'orders-202611010000',
      'orders-202611030000',
    ]);
  });

  it('follows the newest scheduled success, once (its Retention condition)', () => {
    const newest = backup(4, 'Succeeded');
    expect(newestScheduledSuccess([backup(1, 'Succeeded'), newest, backup(5, 'Failed')])).toBe(newest);
    expect(retentionDone(newest)).toBe(false);
    const done: PostgresBackup = {
      ...newest,
      status: {
        ...newest.status,
        conditions: [
          {
            type: 'Retention',
            status: 'False',
            reason: 'ExpireFailed',
            message: 'x',
            lastTransitionTime: '',
          },
        ],
      },
    };
    expect(retentionDone(done)).toBe(true);
  });

  it('waits for an unfinished scheduled backup before the next run', () => {
    expect(unfinishedScheduled([backup(1, 'Succeeded'), backup(2, 'Failed')])).toBeUndefined();
    expect(unfinishedScheduled([backup(1, 'Succeeded'), backup(2, 'Running')])?.metadata?.name).toBe(
      'orders-202611020000',
    );
  });
});

describe('status.backup of the base backups', () => {
  it('names the newest success of all (by hand too) and the newest scheduled run, and the next', () => {
    const all = [backup(1, 'Succeeded'), backup(2, 'Failed'), backup(3, 'Succeeded', false)];
    expect(scheduleStatus(all, day(4))).toEqual({
      lastBackupTime: day(3, 1).toISOString(),
      lastBackupLabel: '20261103-010000F',
      lastScheduledBackup: 'orders-202611020000',
      lastScheduledBackupTime: day(2).toISOString(),
      nextScheduledBackupTime: day(4).toISOString(),
    });
    expect(scheduleStatus([], undefined)).toEqual({});
  });
});
