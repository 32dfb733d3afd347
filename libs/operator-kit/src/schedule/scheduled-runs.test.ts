import { describe, expect, it } from 'vitest';
import { scheduleDecision, scheduledAtOf, scheduledName } from './scheduled-runs.ts';

const at = (hh: number, mm: number, ss = 0) => new Date(Date.UTC(2026, 10, 27, hh, mm, ss));

describe('scheduled runs', () => {
  it('names a run after its scheduled time, in UTC to the minute', () => {
    expect(scheduledName('orders', new Date(Date.UTC(2026, 0, 2, 3, 4, 59)))).toBe('orders-202601020304');
  });

  it('reads the scheduled-at annotation, 0 when absent or not a time', () => {
    const key = 'example.homeostat.dev/scheduled-at';
    expect(scheduledAtOf({ [key]: at(10, 5).toISOString() }, key)).toBe(at(10, 5).getTime());
    expect(scheduledAtOf(undefined, key)).toBe(0);
    expect(scheduledAtOf({ [key]: 'yesterday' }, key)).toBe(0);
  });

  it('is due at the latest cron time after the last run, and says when to look next', () => {
    const decision = scheduleDecision('*/5 * * * *', at(10, 7, 30), at(10, 0).getTime());
    expect(decision.due).toEqual(at(10, 5));
    expect(decision.next).toEqual(at(10, 10));
  });

  it('is not due again once that time has run', () => {
    const decision = scheduleDecision('*/5 * * * *', at(10, 9), at(10, 5).getTime());
    expect(decision.due).toBeUndefined();
    expect(decision.next).toEqual(at(10, 10));
  });

  it('takes runs missed while stopped once, the latest of them, not one per missed time', () => {
    // Down from 10:00 to 11:02: twelve runs missed, one due (10:59 with this schedule's hourly minute).
    const decision = scheduleDecision('59 * * * *', at(11, 2), at(9, 59).getTime());
    expect(decision.due).toEqual(at(10, 59));
    expect(scheduleDecision('*/5 * * * *', at(11, 2), at(10, 0).getTime()).due).toEqual(at(11, 0));
  });

  it('does not run for a time before the owner existed', () => {
    expect(scheduleDecision('@daily', at(10, 0), at(9, 0).getTime()).due).toBeUndefined();
    expect(scheduleDecision('@daily', at(10, 0), at(9, 0).getTime()).next).toEqual(
      new Date(Date.UTC(2026, 10, 28)),
    );
  });

  it('throws on what is not a cron expression', () => {
    expect(() => scheduleDecision('61 * * * *', at(10, 0), 0)).toThrow();
  });
});
