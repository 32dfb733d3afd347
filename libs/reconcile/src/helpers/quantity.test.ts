import { describe, expect, it } from 'vitest';
import { quantityValue, sameResourceList } from './quantity.ts';

describe('quantities', () => {
  it('reads binary, decimal, milli and exponent forms', () => {
    expect(quantityValue('128Mi')).toBe(128 * 2 ** 20);
    expect(quantityValue('1Gi')).toBe(2 ** 30);
    expect(quantityValue('250m')).toBeCloseTo(0.25);
    expect(quantityValue('2')).toBe(2);
    expect(quantityValue('1e3')).toBe(1000);
    expect(quantityValue('1.5k')).toBe(1500);
    expect(quantityValue('lots')).toBeUndefined();
  });

  it("compares lists by value, as the API server's canonical form changes the spelling", () => {
    expect(sameResourceList({ memory: '1024Mi', cpu: '0.5' }, { memory: '1Gi', cpu: '500m' })).toBe(true);
    expect(sameResourceList({ memory: '96Mi' }, { memory: '96Mi', cpu: '1' })).toBe(false);
    expect(sameResourceList({ memory: '96Mi' }, { memory: '97Mi' })).toBe(false);
    expect(sameResourceList(undefined, undefined)).toBe(true);
  });
});
