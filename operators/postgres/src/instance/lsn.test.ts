import { describe, expect, it } from 'vitest';
import { formatLsn, maxLsn, parseLsn } from './lsn.ts';

describe('LSN arithmetic', () => {
  it('parses and prints PostgreSQL LSNs as exact byte offsets', () => {
    expect(parseLsn('0/3000060')).toBe(0x3000060n);
    expect(parseLsn('16/B374D848')).toBe((0x16n << 32n) + 0xb374d848n);
    expect(formatLsn(parseLsn('16/B374D848'))).toBe('16/B374D848');
    expect(parseLsn('1/0') - parseLsn('0/FFFFFFFF')).toBe(1n);
  });
  it('rejects what is not an LSN', () => {
    expect(() => parseLsn('16-B374D848')).toThrow("not a PostgreSQL LSN: '16-B374D848'");
  });
  it('takes the maximum with unknowns', () => {
    expect(maxLsn(undefined, 5n)).toBe(5n);
    expect(maxLsn(7n, 5n)).toBe(7n);
    expect(maxLsn(undefined, undefined)).toBeUndefined();
  });
});
