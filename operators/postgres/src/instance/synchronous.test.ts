import { describe, expect, it } from 'vitest';
import { desiredSynchronousStandbyNames } from './synchronous.ts';

const standbys = ['pg-2', 'pg-1'];

describe('synchronous_standby_names for a durability mode', () => {
  it('is empty without synchronous replication', () => {
    expect(desiredSynchronousStandbyNames(undefined, standbys, new Set(standbys))).toBe('');
  });
  it('required lists the streaming standbys, and while too few stream, others so commits wait', () => {
    const required = { number: 1, dataDurability: 'required' } as const;
    expect(desiredSynchronousStandbyNames(required, standbys, new Set(standbys))).toBe(
      'ANY 1 ("pg-1", "pg-2")',
    );
    // pg-1 never streamed (a former primary still rejoining): it acknowledges nothing.
    expect(desiredSynchronousStandbyNames(required, standbys, new Set(['pg-2']))).toBe('ANY 1 ("pg-2")');
    // None streams: commits must still wait; the recorded standby first, else by name.
    expect(desiredSynchronousStandbyNames(required, standbys, new Set(), ['pg-2'])).toBe('ANY 1 ("pg-2")');
    expect(desiredSynchronousStandbyNames(required, standbys, new Set())).toBe('ANY 1 ("pg-1")');
    const two = { number: 2, dataDurability: 'required' } as const;
    expect(desiredSynchronousStandbyNames(two, ['pg-1', 'pg-2', 'pg-3'], new Set(['pg-3']), ['pg-2'])).toBe(
      'ANY 2 ("pg-2", "pg-3")',
    );
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
