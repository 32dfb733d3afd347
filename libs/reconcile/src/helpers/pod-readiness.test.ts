import { describe, expect, it } from 'vitest';
import { hasReadyCondition, isPodReady } from './pod-readiness.ts';

const withConditions = (conditions?: { type: string; status: string }[]) => ({
  status: conditions ? { conditions } : {},
});

describe('pod readiness as the kubelet reports it', () => {
  it('hasReadyCondition: true only for a Ready condition that is True', () => {
    expect(hasReadyCondition({})).toBe(false);
    expect(hasReadyCondition(withConditions())).toBe(false);
    expect(hasReadyCondition(withConditions([{ type: 'PodScheduled', status: 'True' }]))).toBe(false);
    expect(hasReadyCondition(withConditions([{ type: 'Ready', status: 'False' }]))).toBe(false);
    expect(hasReadyCondition(withConditions([{ type: 'Ready', status: 'Unknown' }]))).toBe(false);
    const ready = withConditions([
      { type: 'ContainersReady', status: 'True' },
      { type: 'Ready', status: 'True' },
    ]);
    expect(hasReadyCondition(ready)).toBe(true);
  });

  it('isPodReady: Ready and not being deleted', () => {
    const ready = withConditions([{ type: 'Ready', status: 'True' }]);
    expect(isPodReady(ready)).toBe(true);
    expect(isPodReady({ ...ready, metadata: { deletionTimestamp: new Date() } })).toBe(false);
    expect(isPodReady(withConditions([{ type: 'Ready', status: 'False' }]))).toBe(false);
  });
});
