import { describe, expect, it } from 'vitest';
import { clusterView } from './cluster-view.ts';
import type { PrimaryStatus, ReplicaStatus } from '../instance/observe.ts';

const primary: PrimaryStatus = {
  name: 'pg-0',
  reachable: true,
  role: 'primary',
  timeline: 2,
  synchronousStandbyNames: 'ANY 1 ("pg-1", "pg-2")',
  currentLsn: 5000n,
  standbys: [
    { applicationName: 'pg-1', state: 'streaming', syncState: 'quorum', flushLsn: 5000n, replayLsn: 4000n },
  ],
};
const replica = (name: string, replayed: bigint): ReplicaStatus => ({
  name,
  reachable: true,
  role: 'replica',
  timeline: 2,
  synchronousStandbyNames: '',
  receivedLsn: replayed,
  replayLsn: replayed,
  walReceiver: { status: 'streaming', senderHost: '127.0.0.1', senderPort: 5432 },
  replayPaused: false,
});

describe('the cluster view', () => {
  it('gives each replica its lag behind the primary and its synchronous state', () => {
    const view = clusterView([
      primary,
      replica('pg-1', 4000n),
      replica('pg-2', 1000n),
      { name: 'pg-3', reachable: false, error: 'down' },
    ]);
    expect(view.primaries).toEqual(['pg-0']);
    expect(view.instances.map((i) => [i.status.name, i.lagBytes, i.replication?.syncState])).toEqual([
      ['pg-0', 0n, undefined],
      ['pg-1', 1000n, 'quorum'],
      ['pg-2', 4000n, undefined],
      ['pg-3', undefined, undefined],
    ]);
  });
  it('names every writer and measures no lag when there are two', () => {
    const view = clusterView([primary, { ...primary, name: 'pg-1' }, replica('pg-2', 1n)]);
    expect(view.primaries).toEqual(['pg-0', 'pg-1']);
    expect(view.instances[2]?.lagBytes).toBeUndefined();
  });
  it('gives each replica what its slot keeps on the primary', () => {
    const slots = [
      { name: 'homeostat_pg_1', active: true, retainedBytes: 1200n },
      { name: 'homeostat_pg_9', active: false, retainedBytes: 90_000n },
    ];
    const view = clusterView([{ ...primary, slots }, replica('pg-1', 4000n), replica('pg-2', 1000n)]);
    expect(view.instances.map((i) => i.slotRetainedBytes)).toEqual([undefined, 1200n, undefined]);
  });
});
