import { describe, expect, it } from 'vitest';
import { isSubset } from './desired-state.ts';

describe('isSubset', () => {
  it('ignores fields only the actual object has (server defaults, status)', () => {
    expect(
      isSubset(
        { spec: { replicas: 2 } },
        { spec: { replicas: 2, strategy: { type: 'RollingUpdate' } }, status: {} },
      ),
    ).toBe(true);
  });
  it('sees a changed, missing or retyped field', () => {
    expect(isSubset({ spec: { replicas: 2 } }, { spec: { replicas: 3 } })).toBe(false);
    expect(isSubset({ data: { a: '1' } }, { data: {} })).toBe(false);
    expect(isSubset({ a: { b: 1 } }, { a: [1] })).toBe(false);
  });
  it('compares arrays element by element, including their length', () => {
    expect(isSubset({ ports: [{ port: 80 }] }, { ports: [{ port: 80, protocol: 'TCP' }] })).toBe(true);
    expect(isSubset({ ports: [{ port: 80 }] }, { ports: [{ port: 80 }, { port: 81 }] })).toBe(false);
  });
});
