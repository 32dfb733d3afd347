import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { PostgresCluster } from '../api/postgres-cluster-types.ts';
import { retainedInstances } from './retained-claims.ts';

const claim = (name: string, created: string, deleting = false): [string, V1PersistentVolumeClaim] => [
  name,
  {
    metadata: {
      name,
      creationTimestamp: new Date(created),
      ...(deleting ? { deletionTimestamp: new Date(created) } : {}),
    },
  },
];
const cluster = {
  metadata: { name: 'c', creationTimestamp: new Date('2026-11-26T10:00:00Z') },
} as PostgresCluster;

describe('retainedInstances', () => {
  it('names the claims made before the cluster was, not those it made, nor one being deleted', () => {
    const claims = new Map([
      claim('c-1', '2026-11-25T09:00:00Z'),
      claim('c-0', '2026-11-25T09:00:00Z'),
      claim('c-2', '2026-11-26T10:00:00Z'),
      claim('c-3', '2026-11-25T09:00:00Z', true),
    ]);
    expect(retainedInstances(cluster, claims)).toEqual(['c-0', 'c-1']);
  });
});
