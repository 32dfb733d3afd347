// The role a missing instance pod is created in: never a second pod on a primary's claim while
// its old pod may still be running.
import { describe, expect, it } from 'vitest';
import { settledState, type FailoverState } from '../failover/failover-state.ts';
import { missingPodRole, type MissingPodInputs } from './missing-pod-role.ts';

const inputs = (state: FailoverState | undefined, instances = 3): MissingPodInputs => ({
  state,
  clusterName: 'pg',
  instances,
});

const failingOver = (step: 'fencing' | 'electing' | 'reinstating'): FailoverState => ({
  ...settledState('pg-0'),
  targetPrimary: 'pg-0',
  operation: {
    kind: 'failover',
    step,
    reason: 'primary pg-0 is unreachable',
    startedAt: 0,
    stepStartedAt: 0,
    fenced: step === 'fencing' ? [] : ['pg-0'],
  },
});

describe('missingPodRole', () => {
  it('creates the first instance as the primary before any primary took writes, the others as replicas', () => {
    expect(missingPodRole('pg-0', inputs(undefined))).toBe('primary');
    expect(missingPodRole('pg-1', inputs(undefined))).toBe('replica');
  });

  it('creates every instance as a replica on claims an earlier cluster left, until one is promoted', () => {
    const retained = { ...inputs(undefined), retained: ['pg-0', 'pg-1'] };
    expect(missingPodRole('pg-0', retained)).toBe('replica');
    expect(missingPodRole('pg-2', retained)).toBe('replica');
    expect(missingPodRole('pg-0', { ...retained, state: settledState('pg-1') })).toBe('replica');
  });

  it("leaves a settled cluster's primary pod missing for the failover to replace, whatever the last refusal was", () => {
    // The refusal that used to let it through: the primary answered "shutting down" while its pod
    // was being force-deleted; a new pod then started next to the old one on the same claim.
    expect(missingPodRole('pg-0', inputs(settledState('pg-0')))).toBeUndefined();
    expect(missingPodRole('pg-1', inputs(settledState('pg-0')))).toBe('replica');
  });

  it('recreates a lone primary in place: nobody could replace it', () => {
    expect(missingPodRole('pg-0', inputs(settledState('pg-0'), 1))).toBe('primary');
  });

  it('brings the old primary back only in the reinstating step; replicas come back during a failover', () => {
    expect(missingPodRole('pg-0', inputs(failingOver('fencing')))).toBeUndefined();
    expect(missingPodRole('pg-0', inputs(failingOver('electing')))).toBeUndefined();
    expect(missingPodRole('pg-0', inputs(failingOver('reinstating')))).toBe('primary');
    expect(missingPodRole('pg-2', inputs(failingOver('electing')))).toBe('replica');
  });
});
