import { describe, expect, it } from 'vitest';
import type { EtcdBackup } from '../../api/etcd-backup-types.ts';
import { prunable } from './backup-schedule-controller.ts';
import { scheduledName } from '@homeostat/operator-kit/schedule';

function scheduled(minute: number, phase: 'Pending' | 'Running' | 'Succeeded' | 'Failed'): EtcdBackup {
  const at = new Date(Date.UTC(2026, 10, 23, 10, minute));
  return {
    metadata: {
      name: scheduledName('orders', at),
      annotations: { 'etcd.homeostat.dev/scheduled-at': at.toISOString() },
    },
    spec: { clusterName: 'orders' },
    status: { phase },
  };
}

const names = (backups: EtcdBackup[]) => backups.map((b) => b.metadata?.name);

describe('scheduled backup retention', () => {
  it('keeps the newest `keep` that succeeded and deletes every finished one older than them', () => {
    const backups = [
      scheduled(0, 'Succeeded'),
      scheduled(5, 'Failed'),
      scheduled(10, 'Succeeded'),
      scheduled(15, 'Succeeded'),
      scheduled(20, 'Failed'),
      scheduled(25, 'Succeeded'),
    ];
    expect(names(prunable(backups, 2))).toEqual([
      'orders-202611231010',
      'orders-202611231005',
      'orders-202611231000',
    ]);
    expect(names(prunable(backups, 4))).toEqual([]);
  });

  it('never deletes a backup still being taken, nor the newest failures, however old', () => {
    const backups = [
      scheduled(0, 'Running'),
      scheduled(5, 'Pending'),
      scheduled(10, 'Failed'),
      scheduled(15, 'Succeeded'),
    ];
    expect(names(prunable(backups, 1))).toEqual(['orders-202611231010']);
    expect(names(prunable([scheduled(0, 'Failed'), scheduled(5, 'Failed')], 1))).toEqual([]);
  });
});
