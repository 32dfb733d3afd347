import { describe, expect, it } from 'vitest';
import { desiredSynchronousStandbyNames } from './synchronous.ts';

const standbys = ['pg-2', 'pg-1'];

describe('synchronous_standby_names for a durability mode', () => {
  it('is empty without synchronous replication', () => {
    expect(desiredSynchronousStandbyNames(undefined, standbys, new Set(standbys))).toBe('');
  });
  it('required lists every standby, connected or not, so commits wait for them', () => {
    const required = { number: 1, dataDurability: 'required' } as const;
    expect(desiredSynchronousStandbyNames(required, standbys, new Set(standbys))).toBe(
      'ANY 1 ("pg-1", "pg-2")',
    );
    expect(desiredSynchronousStandbyNames(required, standbys, new Set())).toBe('ANY 1 ("pg-1", "pg-2")');
  });
  it('preferred lists only streaming standbys and never asks for more than there are', () => {
    const preferred = { number: 2, dataDurability: 'preferred' } as const;
    expect(desiredSynchronousStandbyNames(preferred, standbys, new Set(standbys))).toBe(
      'ANY 2 ("pg-1", "pg-2")',
    );
    expect(desiredSynchronousStandbyNames(preferred, standbys, new Set(['pg-2']))).toBe('ANY 1 ("pg-2")');
    expect(desiredSynchronousStandbyNames(preferred, standbys, new Set())).toBe('');
  });
  it('quotes names', () => {
    expect(
      desiredSynchronousStandbyNames({ number: 1, dataDurability: 'required' }, ['a"b'], new Set()),
    ).toBe('ANY 1 ("a""b")');
  });
});
