// The rolling restart's order: replicas one at a time, each only once every instance is ready,
// then a switchover, and a lone primary restarted in place.
import type { V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { nextRolloutStep, type RolloutInputs } from './rolling-restart.ts';

const pod = (ready: boolean, terminating = false): V1Pod => ({
  metadata: terminating ? { deletionTimestamp: new Date() } : {},
  status: { conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
});

function inputs(changes: Partial<RolloutInputs> = {}): RolloutInputs {
  const names = ['pg-0', 'pg-1', 'pg-2'];
  return {
    cluster: 'pg',
    primary: 'pg-0',
    pods: new Map(names.map((n) => [n, pod(true)])),
    restartPending: names,
    readyInstances: new Set(names),
    instances: 3,
    busy: false,
    operation: false,
    failing: new Set(),
    ...changes,
  };
}

describe('nextRolloutStep', () => {
  it('does nothing when every pod runs the wanted spec, or while an operation runs', () => {
    expect(nextRolloutStep(inputs({ restartPending: [] })).type).toBe('none');
    expect(nextRolloutStep(inputs({ busy: true }))).toEqual({
      type: 'none',
      why: 'a failover or switchover is in progress',
    });
  });

  it('replaces a failing pod that runs an older spec at once, whatever its role, but not during an operation', () => {
    const bootstrapping = inputs({
      restartPending: ['pg-0'],
      pods: new Map([['pg-0', pod(false)]]),
      readyInstances: new Set(),
      instances: 1,
      busy: true, // the first primary is not up yet
      failing: new Set(['pg-0']),
    });
    expect(nextRolloutStep(bootstrapping)).toEqual({ type: 'replace-failing', instance: 'pg-0' });
    const brokenReplica = inputs({
      pods: new Map([
        ['pg-0', pod(true)],
        ['pg-1', pod(true)],
        ['pg-2', pod(false)],
      ]),
      readyInstances: new Set(['pg-0', 'pg-1']),
      failing: new Set(['pg-2']),
    });
    expect(nextRolloutStep(brokenReplica)).toEqual({ type: 'replace-failing', instance: 'pg-2' });
    expect(nextRolloutStep({ ...brokenReplica, busy: true, operation: true }).type).toBe('none');
    // Failing but already on the wanted spec: nothing a restart would change.
    expect(nextRolloutStep({ ...brokenReplica, restartPending: ['pg-1'] })).toEqual({
      type: 'none',
      why: 'waiting for pg-2 to be ready',
    });
  });

  it('restarts the replicas first, lowest ordinal first, never the primary', () => {
    expect(nextRolloutStep(inputs())).toEqual({ type: 'restart-replica', instance: 'pg-1' });
    expect(nextRolloutStep(inputs({ primary: 'pg-1' }))).toEqual({
      type: 'restart-replica',
      instance: 'pg-0',
    });
    expect(nextRolloutStep(inputs({ restartPending: ['pg-0', 'pg-2'] }))).toEqual({
      type: 'restart-replica',
      instance: 'pg-2',
    });
  });

  it('waits while any instance is missing, terminating, not Ready or not streaming', () => {
    const waiting = [
      inputs({
        pods: new Map([
          ['pg-0', pod(true)],
          ['pg-2', pod(true)],
        ]),
      }),
      inputs({
        pods: new Map([
          ['pg-0', pod(true)],
          ['pg-1', pod(true, true)],
          ['pg-2', pod(true)],
        ]),
      }),
      inputs({
        pods: new Map([
          ['pg-0', pod(true)],
          ['pg-1', pod(false)],
          ['pg-2', pod(true)],
        ]),
      }),
      inputs({ readyInstances: new Set(['pg-0', 'pg-2']) }),
    ];
    for (const input of waiting) expect(nextRolloutStep(input).type).toBe('none');
    expect(nextRolloutStep(inputs({ readyInstances: new Set(['pg-0', 'pg-2']) }))).toEqual({
      type: 'none',
      why: 'waiting for pg-1 to be ready',
    });
  });

  it('switches over to an up-to-date replica once only the primary is left', () => {
    expect(nextRolloutStep(inputs({ restartPending: ['pg-0'] }))).toEqual({ type: 'switchover', to: 'pg-1' });
  });

  it('restarts a lone primary in place', () => {
    expect(
      nextRolloutStep(
        inputs({
          pods: new Map([['pg-0', pod(true)]]),
          restartPending: ['pg-0'],
          readyInstances: new Set(['pg-0']),
          instances: 1,
        }),
      ),
    ).toEqual({ type: 'restart-primary', instance: 'pg-0' });
  });
});
