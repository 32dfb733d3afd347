import type { V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { backupsHeldByDrills } from './drill-holds.ts';

const marks = {
  clusterLabel: 'example.homeostat.dev/drill',
  backupAnnotation: 'example.homeostat.dev/backup',
};
const pod = (
  name: string,
  over: { namespace?: string; cluster?: string; backup?: string; deleting?: boolean; phase?: string } = {},
): V1Pod => ({
  metadata: {
    name,
    namespace: over.namespace ?? 'prod',
    labels: { [marks.clusterLabel]: over.cluster ?? 'orders' },
    ...(over.backup === ''
      ? {}
      : { annotations: { [marks.backupAnnotation]: over.backup ?? `backup-of-${name}` } }),
    ...(over.deleting ? { deletionTimestamp: new Date('2026-11-27T10:00:00Z') } : {}),
  },
  ...(over.phase ? { status: { phase: over.phase } } : {}),
});

describe('the backups a running restore drill holds', () => {
  it('are those the cluster’s drill pods name, whatever their phase until they are deleted', () => {
    const pods = [pod('pending'), pod('running', { phase: 'Running' }), pod('ended', { phase: 'Succeeded' })];
    expect([...backupsHeldByDrills(pods, marks, 'prod', 'orders')].sort()).toEqual([
      'backup-of-ended',
      'backup-of-pending',
      'backup-of-running',
    ]);
  });

  it('are none of another cluster, another namespace, a pod being deleted, or a pod naming none', () => {
    const pods = [
      pod('other-cluster', { cluster: 'billing' }),
      pod('other-namespace', { namespace: 'staging' }),
      pod('deleted', { deleting: true }),
      pod('unnamed', { backup: '' }),
    ];
    expect(backupsHeldByDrills(pods, marks, 'prod', 'orders').size).toBe(0);
  });
});
