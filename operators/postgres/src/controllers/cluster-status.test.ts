import { describe, expect, it } from 'vitest';
import { findCondition } from '@homeostat/reconcile';
import { clusterView } from '../failover/cluster-view.ts';
import { settledState } from '../failover/failover-state.ts';
import type { PrimaryStatus, ReplicaStatus } from '../instance/observe.ts';
import { storedCluster } from '../test-support/cluster-fixtures.ts';
import { clusterStatus, newlyKeptAside, type ClusterObservation } from './cluster-status.ts';

describe('former primary data kept aside', () => {
  it('is reported once per instance, when it first appears in the status', () => {
    const replica = { role: 'replica' as const, ready: true };
    const before = [
      { name: 'db-0', ...replica },
      { name: 'db-1', ...replica, formerDataKeptAside: true },
    ];
    const after = [
      { name: 'db-0', ...replica, formerDataKeptAside: true },
      { name: 'db-1', ...replica, formerDataKeptAside: true },
    ];
    expect(newlyKeptAside(before, after)).toEqual(['db-0']);
    expect(newlyKeptAside(after, after)).toEqual([]);
    expect(newlyKeptAside(undefined, after)).toEqual(['db-0', 'db-1']);
  });
});

/** db-1 streaming from db-0 on timeline 1. */
const streamingReplica: ReplicaStatus = {
  name: 'db-1',
  reachable: true,
  role: 'replica',
  timeline: 1,
  synchronousStandbyNames: '',
  receivedLsn: 100n,
  replayLsn: 100n,
  replayPaused: false,
  walReceiver: { status: 'streaming', senderHost: 'db-0', senderPort: 5432 },
};

/** db-0, a primary taking writes on timeline 1. */
const writablePrimary: PrimaryStatus = {
  name: 'db-0',
  reachable: true,
  role: 'primary',
  timeline: 1,
  synchronousStandbyNames: '',
  currentLsn: 100n,
  standbys: [],
};

describe('a primary that refuses writes', () => {
  const cluster = storedCluster('db', 'shop', { instances: 2 });
  const replica = streamingReplica;
  const observation = (primary: PrimaryStatus): ClusterObservation => ({
    state: settledState('db-0'),
    pods: new Map([
      ['db-0', { metadata: { name: 'db-0' } }],
      ['db-1', { metadata: { name: 'db-1' } }],
    ]),
    view: clusterView([primary, replica]),
    restartPending: [],
  });
  const writable = writablePrimary;

  it('is neither Available nor Healthy, and not ready (a quiesce whose undo failed)', () => {
    const healthy = clusterStatus(cluster, observation(writable));
    expect(healthy.phase).toBe('Healthy');
    expect(findCondition(healthy.conditions, 'Available')?.status).toBe('True');

    const status = clusterStatus(cluster, observation({ ...writable, readOnly: true }));
    expect(status.phase).toBe('Unavailable');
    expect(findCondition(status.conditions, 'Available')).toMatchObject({
      status: 'False',
      reason: 'PrimaryReadOnly',
    });
    expect(status.instanceStatuses?.find((i) => i.name === 'db-0')).toMatchObject({
      role: 'primary',
      ready: false,
    });
  });
});

describe('the timeline in status', () => {
  const cluster = storedCluster('db', 'shop', { instances: 2 });
  const promoted: ReplicaStatus = { ...streamingReplica, timeline: 3 };
  const pods = new Map([
    ['db-0', { metadata: { name: 'db-0' } }],
    ['db-1', { metadata: { name: 'db-1' } }],
  ]);

  it("is the promotion's, not the new primary's answer as a standby from before it", () => {
    // The reconcile that completes a switchover saw db-1 as a standby still on timeline 3.
    const status = clusterStatus(cluster, {
      state: settledState('db-1'),
      pods,
      view: clusterView([promoted]),
      restartPending: [],
      promotedTimeline: 4,
    });
    expect(status.timeline).toBe(4);
  });

  it("is never a standby's: without a promotion in this reconcile, the last one written stays", () => {
    const written = { ...cluster, status: { timeline: 4 } };
    const status = clusterStatus(written, {
      state: settledState('db-1'),
      pods,
      view: clusterView([promoted]),
      restartPending: [],
    });
    expect(status.timeline).toBe(4);
  });
});

describe('instances fenced on request', () => {
  const cluster = storedCluster('db', 'shop', { instances: 2 });
  const primary = writablePrimary;
  const observation = (
    fenced: string[],
    view = clusterView([primary, streamingReplica]),
  ): ClusterObservation => ({
    state: settledState('db-0'),
    pods: new Map([
      ['db-0', { metadata: { name: 'db-0' } }],
      ['db-1', { metadata: { name: 'db-1' } }],
    ]),
    view,
    restartPending: [],
    fenced: new Set(fenced),
  });

  it('shows a fenced replica as fenced and not ready, whatever a probe caught, and the cluster Degraded', () => {
    const status = clusterStatus(cluster, observation(['db-1']));
    expect(status.instanceStatuses?.find((i) => i.name === 'db-1')).toEqual({
      name: 'db-1',
      role: 'fenced',
      ready: false,
      fenced: true,
    });
    expect(findCondition(status.conditions, 'Degraded')).toMatchObject({
      status: 'True',
      reason: 'InstancesFenced',
      message: 'fenced on request: db-1; 1 of 2 instances ready',
    });
    expect(findCondition(status.conditions, 'Available')).toMatchObject({ status: 'True' });
  });

  it('says a fenced primary takes no writes, and why', () => {
    const unreachable = { name: 'db-0', reachable: false as const, error: 'connection refused' };
    const status = clusterStatus(
      cluster,
      observation(['db-0'], clusterView([unreachable, streamingReplica])),
    );
    expect(findCondition(status.conditions, 'Available')).toMatchObject({
      status: 'False',
      reason: 'PrimaryFenced',
    });
    expect(status.phase).toBe('Unavailable');
  });
});
