import { describe, expect, it } from 'vitest';
import { drillTarget, type DrillableBackup } from './drill-target.ts';

interface Backup extends DrillableBackup {
  readonly metadata: { readonly name: string };
  readonly status: { readonly finishedAt?: string; readonly verification?: { readonly result: string } };
}
const backup = (name: string, finishedAt: string | undefined, verdict?: 'Verified' | 'Failed'): Backup => ({
  metadata: { name },
  status: {
    ...(finishedAt ? { finishedAt } : {}),
    ...(verdict ? { verification: { result: verdict } } : {}),
  },
});

describe('the backup a restore drill proves', () => {
  it('takes the newest backup no drill restored yet, then the older ones, then the newest again', () => {
    const older = backup('older', '2026-11-25T00:00:00Z');
    const newer = backup('newer', '2026-11-26T00:00:00Z');
    expect(drillTarget([older, newer])).toEqual({ backup: newer, undrilled: 2 });
    const newerProven = backup('newer', '2026-11-26T00:00:00Z', 'Verified');
    expect(drillTarget([older, newerProven])).toEqual({ backup: older, undrilled: 1 });
    const olderProven = backup('older', '2026-11-25T00:00:00Z', 'Verified');
    expect(drillTarget([olderProven, newerProven])).toEqual({ backup: newerProven, undrilled: 0 });
  });

  it('counts a failed drill as drilled: a broken backup does not hold up the proof of the others', () => {
    const broken = backup('broken', '2026-11-26T00:00:00Z', 'Failed');
    const older = backup('older', '2026-11-25T00:00:00Z');
    expect(drillTarget([broken, older]).backup).toBe(older);
    // Once every one has a verdict, the newest again, whatever its verdict was.
    const olderFailed = backup('older', '2026-11-25T00:00:00Z', 'Failed');
    expect(drillTarget([olderFailed, broken]).backup).toBe(broken);
  });

  it('orders by completion time, not by the order given nor by how the time is written', () => {
    const millis = backup('millis', '2026-11-26T10:00:00.500Z');
    const seconds = backup('seconds', '2026-11-26T10:00:01Z');
    expect(drillTarget([seconds, millis]).backup).toBe(seconds);
    expect(drillTarget([millis, seconds]).backup).toBe(seconds);
    // Two completed at the same time: the same one every time (by name).
    const a = backup('a', '2026-11-26T10:00:01Z');
    expect(drillTarget([seconds, a]).backup).toBe(a);
    expect(drillTarget([a, seconds]).backup).toBe(a);
  });

  it('never takes a backup with no completion time, and none from none', () => {
    expect(drillTarget([backup('unfinished', undefined)])).toEqual({ backup: undefined, undrilled: 0 });
    expect(drillTarget<Backup>([])).toEqual({ backup: undefined, undrilled: 0 });
  });
});
