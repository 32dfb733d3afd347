import { describe, expect, it } from 'vitest';
import { newlyKeptAside } from './cluster-status.ts';

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
