import { describe, expect, it } from 'vitest';
import { backupsToExpire } from './retention.ts';
import { backupAt } from './test-backups.ts';

const day = (d: number) => `2026-11-${String(d).padStart(2, '0')}T00:00:00Z`;
const backups = [1, 3, 5, 7, 9].map((d) =>
  backupAt(`b${d}`, day(d), `0/${d}000000`, `0000000100000000000000${String(d).padStart(2, '0')}`),
);
const now = new Date(day(10));
const labels = (list: readonly { label: string }[]) => list.map((b) => b.label);

describe('backupsToExpire', () => {
  it('keeps everything without a policy', () => {
    expect(backupsToExpire(backups, {}, now)).toEqual([]);
  });

  it('by count keeps the newest ones', () => {
    expect(labels(backupsToExpire(backups, { keepLast: 2 }, now))).toEqual(['b1', 'b3', 'b5']);
  });

  it('by age keeps the window and the backup the window starts from', () => {
    // The window starts on day 6: b7 and b9 are in it, b5 is what replays into its start.
    expect(labels(backupsToExpire(backups, { maxAgeDays: 4 }, now))).toEqual(['b1', 'b3']);
  });

  it('both together keep what either would keep', () => {
    expect(labels(backupsToExpire(backups, { keepLast: 4, maxAgeDays: 1 }, now))).toEqual(['b1']);
    expect(labels(backupsToExpire(backups, { keepLast: 1, maxAgeDays: 4 }, now))).toEqual(['b1', 'b3']);
  });

  it('never lets the newest backup go', () => {
    expect(labels(backupsToExpire(backups, { keepLast: 0 }, now))).toEqual(['b1', 'b3', 'b5', 'b7']);
    expect(labels(backupsToExpire(backups, { maxAgeDays: 0 }, new Date(day(30))))).toEqual([
      'b1',
      'b3',
      'b5',
      'b7',
    ]);
  });
});
