import { describe, expect, it } from 'vitest';
import { setCondition, isConditionTrue } from './conditions.ts';

const t0 = new Date('2026-11-21T00:00:00.123Z');
const t1 = new Date('2026-11-21T00:05:00Z');

describe('setCondition (KEP-1623)', () => {
  it('adds a condition with observedGeneration and a second-precision transition time', () => {
    const conditions = setCondition(
      [],
      { type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable', message: 'ok' },
      3,
      t0,
    );
    expect(conditions).toEqual([
      {
        type: 'Available',
        status: 'True',
        reason: 'MinimumReplicasAvailable',
        message: 'ok',
        observedGeneration: 3,
        lastTransitionTime: '2026-11-21T00:00:00Z',
      },
    ]);
    expect(isConditionTrue(conditions, 'Available')).toBe(true);
  });

  it('keeps lastTransitionTime when only reason, message or generation change', () => {
    const first = setCondition(
      [],
      { type: 'Ready', status: 'False', reason: 'Scaling', message: '1/3' },
      1,
      t0,
    );
    const second = setCondition(
      first,
      { type: 'Ready', status: 'False', reason: 'Scaling', message: '2/3' },
      2,
      t1,
    );
    expect(second[0]?.lastTransitionTime).toBe('2026-11-21T00:00:00Z');
    expect(second[0]?.message).toBe('2/3');
    expect(second[0]?.observedGeneration).toBe(2);
  });

  it('moves lastTransitionTime when the status changes', () => {
    const first = setCondition([], { type: 'Ready', status: 'False', reason: 'Scaling', message: '' }, 1, t0);
    const second = setCondition(
      first,
      { type: 'Ready', status: 'True', reason: 'AllReplicasReady', message: '' },
      1,
      t1,
    );
    expect(second[0]?.lastTransitionTime).toBe('2026-11-21T00:05:00Z');
  });

  it('yields an equal list for an unchanged condition, so a converged status writes nothing', () => {
    const input = {
      type: 'Ready',
      status: 'True',
      reason: 'AllReplicasReady',
      message: 'all 3 ready',
    } as const;
    const first = setCondition([], input, 4, t0);
    expect(setCondition(first, input, 4, t1)).toEqual(first);
  });

  it('refuses a reason that is not CamelCase', () => {
    expect(() =>
      setCondition([], { type: 'Ready', status: 'True', reason: 'all good', message: '' }, 1),
    ).toThrow(/CamelCase/);
  });
});
