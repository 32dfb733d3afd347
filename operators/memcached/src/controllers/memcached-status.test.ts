import { describe, expect, it } from 'vitest';
import type { V1StatefulSet } from '@kubernetes/client-node';
import { findCondition } from '@homeostat/reconcile';
import type { Memcached } from '../api/memcached-types.ts';
import { memcachedStatus, minimumAvailable } from './memcached-status.ts';
import { defaultedSpec } from '../test-support/memcached-fixtures.ts';

const memcached = (size: number, maxUnavailable = 1): Memcached => ({
  metadata: { name: 'm', namespace: 'ns', generation: 4 },
  spec: defaultedSpec({ size, podDisruptionBudget: { enabled: true, maxUnavailable } }),
});
const statefulSet = (status: NonNullable<V1StatefulSet['status']>): V1StatefulSet => ({
  metadata: { generation: 2 },
  status: { observedGeneration: 2, ...status },
});
const reasons = (m: Memcached, d: V1StatefulSet | undefined, writeError?: string) => {
  const status = memcachedStatus(m, {
    statefulSet: d,
    pods: [],
    ...(writeError ? { writeError: { reason: 'ApplyFailed', message: writeError } } : {}),
  });
  return ['Available', 'Progressing', 'Degraded'].map((t) => {
    const c = findCondition(status.conditions, t);
    return `${c?.status}/${c?.reason}`;
  });
};

describe('Memcached status', () => {
  it('needs size - maxUnavailable pods ready, and at least one', () => {
    expect(minimumAvailable(memcached(5, 2))).toBe(3);
    expect(minimumAvailable(memcached(2, 5))).toBe(1);
    expect(minimumAvailable(memcached(1))).toBe(1);
  });

  it('is not available at size 0, and says so', () => {
    expect(reasons(memcached(0), statefulSet({ replicas: 0 }))).toEqual([
      'False/ScaledToZero',
      'False/Complete',
      'False/AsExpected',
    ]);
  });

  it('reports scaling down while extra pods still exist', () => {
    expect(reasons(memcached(2), statefulSet({ replicas: 4, readyReplicas: 4, updatedReplicas: 4 }))).toEqual(
      ['True/MinimumPodsReady', 'True/ScalingDown', 'False/AsExpected'],
    );
  });

  it('is Degraded when a write failed', () => {
    expect(reasons(memcached(1), undefined, 'applying StatefulSet m: forbidden')).toEqual([
      'False/NotEnoughPodsReady',
      'True/Creating',
      'True/ApplyFailed',
    ]);
  });

  it('publishes every server the spec asks for, in ordinal order, ready or not', () => {
    const status = memcachedStatus(memcached(3), {
      statefulSet: statefulSet({ replicas: 1, readyReplicas: 0 }),
      pods: [],
    });
    expect(status.servers).toEqual(['m-0.m.ns.svc:11211', 'm-1.m.ns.svc:11211', 'm-2.m.ns.svc:11211']);
  });

  it('is Degraded while a named Secret cannot be used, a refused write said first', () => {
    const secretProblem = {
      reason: 'SecretMissing',
      message: 'Secret c-tls (spec.tls.secretName) does not exist',
    };
    const ready = statefulSet({ replicas: 1, readyReplicas: 1, updatedReplicas: 1 });
    const degraded = (observed: { writeError?: { reason: string; message: string } }) =>
      findCondition(
        memcachedStatus(memcached(1), { statefulSet: ready, pods: [], secretProblem, ...observed })
          .conditions,
        'Degraded',
      );
    expect(degraded({})).toMatchObject({ status: 'True', ...secretProblem });
    expect(
      degraded({ writeError: { reason: 'ApplyFailed', message: 'applying Service m refused' } }),
    ).toMatchObject({
      reason: 'ApplyFailed',
    });
  });

  it('stamps every condition with the generation it describes', () => {
    const status = memcachedStatus(memcached(1), { statefulSet: undefined, pods: [] });
    expect(status.observedGeneration).toBe(4);
    expect(status.conditions?.every((c) => c.observedGeneration === 4)).toBe(true);
  });
});
