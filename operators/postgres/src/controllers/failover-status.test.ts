import { describe, expect, it } from 'vitest';
import { stateFromStatus, statusFromState } from './failover-status.ts';
import type { FailoverState } from '../failover/failover-state.ts';
import type { PostgresCluster } from '../api/postgres-cluster-types.ts';
import { storedCluster } from '../test-support/cluster-fixtures.ts';

const cluster = (state: FailoverState): PostgresCluster => ({
  ...storedCluster('accounts', 'default'),
  status: statusFromState(state, { failovers: 0, switchovers: 0 }),
});

describe('the failover state kept in the status', () => {
  it('reads back what it wrote, commit quorums and operation included', () => {
    const state: FailoverState = {
      currentPrimary: 'accounts-0',
      targetPrimary: 'accounts-1',
      failingSince: Date.parse('2026-11-27T10:00:00.000Z'),
      operation: {
        kind: 'failover',
        step: 'electing',
        reason: 'primary down',
        startedAt: Date.parse('2026-11-27T10:00:02.000Z'),
        stepStartedAt: Date.parse('2026-11-27T10:00:03.000Z'),
        fenced: ['accounts-0'],
        referenceLsn: 0x3000060n,
        deadline: Date.parse('2026-11-27T10:00:13.000Z'),
        promoteWith: 'ANY 1 ("accounts-0", "accounts-2")',
      },
      commitQuorums: {
        quorums: [
          { number: 1, standbys: ['accounts-1', 'accounts-2'] },
          { number: 1, standbys: ['accounts-1'] },
        ],
        running: {
          quorum: { number: 1, standbys: ['accounts-1'] },
          seenAt: Date.parse('2026-11-27T09:59:00.000Z'),
          fromLsn: 0x3000028n,
        },
      },
    };
    expect(stateFromStatus(cluster(state))).toEqual(state);
    const settled: FailoverState = { currentPrimary: 'accounts-1', targetPrimary: 'accounts-1' };
    expect(stateFromStatus(cluster(settled))).toEqual(settled);
  });
});
