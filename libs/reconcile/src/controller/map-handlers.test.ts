import { describe, expect, it } from 'vitest';
import { mapToLabelledOwner } from './map-handlers.ts';

describe('mapToLabelledOwner', () => {
  const map = mapToLabelledOwner('app.kubernetes.io/instance');

  it('wakes the owner the label names, in the object’s namespace', () => {
    expect(
      map({
        metadata: { name: 'orders-0', namespace: 'shop', labels: { 'app.kubernetes.io/instance': 'orders' } },
      }),
    ).toEqual([{ namespace: 'shop', name: 'orders' }]);
  });

  it('maps an object without the label, or with it empty, to nothing', () => {
    expect(map({ metadata: { name: 'x', namespace: 'shop' } })).toEqual([]);
    expect(
      map({ metadata: { name: 'x', namespace: 'shop', labels: { 'app.kubernetes.io/instance': '' } } }),
    ).toEqual([]);
  });
});
