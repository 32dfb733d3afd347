import { describe, expect, it } from 'vitest';
import { hasRunLongEnough, minRunningMs } from './rolling-upgrade.ts';

describe('hasRunLongEnough', () => {
  const stamp = '2026-11-24T12:00:05Z';
  const stampedMs = Date.parse(stamp);

  it('counts from the end of the whole second the API server keeps, never short of minRunningMs', () => {
    // Started at 12:00:05.999 at the latest: 12:00:05 + minRunningMs is up to a second short.
    expect(hasRunLongEnough(stamp, stampedMs + minRunningMs)).toBe(false);
    expect(hasRunLongEnough(stamp, stampedMs + minRunningMs + 999)).toBe(false);
    expect(hasRunLongEnough(stamp, stampedMs + minRunningMs + 1000)).toBe(true);
  });

  it('reads a Date as the client decodes it, and a fraction the same way as its whole second', () => {
    expect(hasRunLongEnough(new Date(stampedMs), stampedMs + minRunningMs + 1000)).toBe(true);
    expect(hasRunLongEnough('2026-11-24T12:00:05.400Z', stampedMs + minRunningMs + 999)).toBe(false);
  });

  it('is never long enough without a start time', () => {
    expect(hasRunLongEnough(undefined, Date.now())).toBe(false);
    expect(hasRunLongEnough('not a time', Date.now())).toBe(false);
  });
});
