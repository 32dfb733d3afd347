import { describe, expect, it } from 'vitest';
import type { V1Pod } from '@kubernetes/client-node';
import { fencedInstancesAnnotation } from '../api/fencing-request.ts';
import { storedCluster } from '../test-support/cluster-fixtures.ts';
import {
  fencedOnRequest,
  justUnfenced,
  outOfService,
  primaryHold,
  unfenceGraceMs,
} from './fenced-instances.ts';

const pod = (name: string, annotations: Record<string, string> = {}): [string, V1Pod] => [
  name,
  { metadata: { name, annotations } },
];
const pods = new Map([pod('db-0'), pod('db-1', { 'postgres.homeostat.dev/fenced': 'true' }), pod('db-2')]);
const asking = (value: string) => {
  const cluster = storedCluster('db', 'shop', { instances: 3 });
  cluster.metadata = { ...cluster.metadata, annotations: { [fencedInstancesAnnotation]: value } };
  return cluster;
};

describe('which instances are fenced on request', () => {
  it('follows the annotation: names of the cluster, or every instance', () => {
    expect([...fencedOnRequest(asking('["db-2"]'), pods).instances]).toEqual(['db-2']);
    expect([...fencedOnRequest(asking('["*"]'), pods).instances].sort()).toEqual(['db-0', 'db-1', 'db-2']);
    expect(fencedOnRequest(storedCluster('db', 'shop', { instances: 3 }), pods).instances.size).toBe(0);
  });

  it('names what is not an instance of the cluster, and fences the rest', () => {
    const read = fencedOnRequest(asking('["db-0","other-1","db-x"]'), pods);
    expect([...read.instances]).toEqual(['db-0']);
    expect(read.problem).toContain('names db-x, other-1, not an instance of db');
  });

  it('leaves every fence as it is when the request cannot be read', () => {
    const read = fencedOnRequest(asking('db-2'), pods);
    expect([...read.instances]).toEqual(['db-1']);
    expect(read.problem).toContain('fencing is left as it is (fenced: db-1)');
  });
});

describe('the instances out of service on purpose', () => {
  it('are those fenced on request and those whose pod is still fenced (its unfence not written yet)', () => {
    expect([...outOfService(new Set(['db-2']), pods)].sort()).toEqual(['db-1', 'db-2']);
    expect([...outOfService(new Set(), pods)]).toEqual(['db-1']);
  });

  it('leave out a fenced pod on its way out: its annotation stays, and must not hold its instance for ever', () => {
    const [, leaving] = pod('db-1', { 'postgres.homeostat.dev/fenced': 'true' });
    leaving.metadata = { ...leaving.metadata, deletionTimestamp: new Date('2026-11-28T10:00:00Z') };
    expect([...outOfService(new Set(), new Map([['db-1', leaving]]))]).toEqual([]);
    expect([...outOfService(new Set(['db-1']), new Map([['db-1', leaving]]))]).toEqual(['db-1']);
  });
});

describe('the failover engine holds for the primary', () => {
  const now = Date.parse('2026-11-28T10:00:00Z');
  const [, fencedPod] = pod('db-0', { 'postgres.homeostat.dev/fenced': 'true' });
  const [, unfencedPod] = pod('db-0', { 'postgres.homeostat.dev/unfencedAt': '2026-11-28T09:59:50Z' });
  const [, plainPod] = pod('db-0');

  it('while it is fenced on request, and while its pod still is though the request no longer names it', () => {
    expect(primaryHold('db-0', new Set(['db-0']), plainPod, now)).toBe('the primary db-0 is fenced');
    // The turn that reads the unfence request: the pod's annotation goes in this very turn, and the
    // primary is still stopped. Counting its silence here failed a just-unfenced primary over.
    const seenPods = new Map([['db-0', fencedPod]]);
    expect(primaryHold('db-0', outOfService(new Set(), seenPods), fencedPod, now)).toBe(
      'the primary db-0 is fenced',
    );
  });

  it('while it starts again after its unfence, and not otherwise', () => {
    expect(primaryHold('db-0', new Set(), unfencedPod, now)).toBe(
      'the primary db-0 was just unfenced and is starting',
    );
    expect(primaryHold('db-0', new Set(), plainPod, now)).toBeUndefined();
    expect(primaryHold(undefined, new Set(['db-0']), fencedPod, now)).toBeUndefined();
  });
});

describe('a primary just unfenced', () => {
  const now = Date.parse('2026-11-28T08:00:00Z');
  const unfencedAgo = (ms: number) =>
    pod('db-0', { 'postgres.homeostat.dev/unfencedAt': new Date(now - ms).toISOString() })[1];
  it('has unfenceGraceMs to start again, and no longer', () => {
    expect(justUnfenced(unfencedAgo(1000), now)).toBe(true);
    expect(justUnfenced(unfencedAgo(unfenceGraceMs), now)).toBe(false);
    expect(justUnfenced(pod('db-0')[1], now)).toBe(false);
  });
});
