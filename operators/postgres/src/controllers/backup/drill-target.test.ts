import { describe, expect, it } from 'vitest';
import type { PostgresBackup } from '../../api/postgres-backup-types.ts';
import { drillTarget } from './drill-target.ts';

const backup = (
  name: string,
  finishedAt: string,
  status: Partial<NonNullable<PostgresBackup['status']>> = {},
): PostgresBackup => ({
  metadata: { name },
  spec: { clusterName: 'c', target: 'PreferStandby' },
  status: { phase: 'Succeeded', clusterUid: 'u-1', label: `label-${name}`, finishedAt, ...status },
});
const verified = { verification: { result: 'Verified' as const, drilledAt: '2026-11-27T10:00:00Z' } };

describe('the backup a restore drill proves', () => {
  it('takes the newest backup no drill restored yet, then the older ones, then the newest again', () => {
    const older = backup('older', '2026-11-25T00:00:00Z');
    const newer = backup('newer', '2026-11-26T00:00:00Z');
    expect(drillTarget([older, newer], 'u-1')).toMatchObject({ backup: newer, undrilled: 2 });
    const newerProven = { ...newer, status: { ...newer.status, ...verified } } as PostgresBackup;
    expect(drillTarget([older, newerProven], 'u-1')).toMatchObject({ backup: older, undrilled: 1 });
    const olderProven = { ...older, status: { ...older.status, ...verified } } as PostgresBackup;
    expect(drillTarget([olderProven, newerProven], 'u-1')).toMatchObject({
      backup: newerProven,
      undrilled: 0,
    });
  });

  it('counts a failed drill as drilled: a broken backup does not hold up the proof of the others', () => {
    const broken = backup('broken', '2026-11-26T00:00:00Z', {
      verification: { result: 'Failed', drilledAt: '2026-11-27T10:00:00Z', message: 'segment missing' },
    });
    const older = backup('older', '2026-11-25T00:00:00Z');
    expect(drillTarget([broken, older], 'u-1').backup?.metadata?.name).toBe('older');
  });

  it('never takes a backup that failed, is being deleted, has no label or is of another incarnation', () => {
    const choices = [
      backup('failed', '2026-11-26T00:00:00Z', { phase: 'Failed' }),
      {
        ...backup('going', '2026-11-26T00:00:00Z'),
        metadata: { name: 'going', deletionTimestamp: new Date() },
      },
      backup('unlabelled', '2026-11-26T00:00:00Z', { label: '' }),
      backup('stranger', '2026-11-26T00:00:00Z', { clusterUid: 'u-0' }),
    ] as PostgresBackup[];
    expect(drillTarget(choices, 'u-1')).toEqual({ backup: undefined, undrilled: 0 });
  });
});
