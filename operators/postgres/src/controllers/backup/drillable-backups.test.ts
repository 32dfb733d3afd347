import { describe, expect, it } from 'vitest';
import type { PostgresBackup } from '../../api/postgres-backup-types.ts';
import { drillableBackups } from './drillable-backups.ts';

const backup = (
  name: string,
  status: Partial<NonNullable<PostgresBackup['status']>> = {},
  metadata: PostgresBackup['metadata'] = {},
): PostgresBackup => ({
  metadata: { name, namespace: 'prod', ...metadata },
  spec: { clusterName: 'c', target: 'PreferStandby' },
  status: {
    phase: 'Succeeded',
    clusterUid: 'u-1',
    label: `label-${name}`,
    finishedAt: '2026-11-26T00:00:00Z',
    ...status,
  },
});

describe('the backups a restore drill may restore', () => {
  it('are the succeeded, labelled backups of this incarnation of the cluster', () => {
    const good = backup('good');
    expect(drillableBackups([good], 'prod', 'u-1')).toEqual([good]);
  });

  it('never one that failed, is being deleted, has no label, is of another incarnation or namespace', () => {
    const choices = [
      backup('failed', { phase: 'Failed' }),
      backup('going', {}, { deletionTimestamp: new Date() }),
      backup('unlabelled', { label: '' }),
      backup('stranger', { clusterUid: 'u-0' }),
      backup('elsewhere', {}, { namespace: 'staging' }),
    ];
    expect(drillableBackups(choices, 'prod', 'u-1')).toEqual([]);
  });
});
