import { describe, expect, it } from 'vitest';
import { backupName } from './backup.ts';

describe('backupName (an on-demand backup named after its cluster and the time)', () => {
  it('sorts by time, in UTC', () => {
    expect(backupName('accounts', new Date('2026-11-27T18:15:02.123Z'))).toBe('accounts-20261127-181502');
  });

  it('stays a valid name (at most 63 characters) for the longest cluster name', () => {
    const name = backupName('c'.repeat(63), new Date('2026-11-27T18:15:02Z'));
    expect(name).toHaveLength(63);
    expect(name).toMatch(/^c+-20261127-181502$/);
  });
});
