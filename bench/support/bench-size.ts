// The size knob every benchmark shares: BENCH_SMOKE=1 (set by `npm run bench:smoke`) asks for the
// small size that proves the benchmark still runs to its end, in seconds; explicit arguments win.

/** True when the smoke runner (or a person) asked for the smallest meaningful run. */
export const smoke = process.env['BENCH_SMOKE'] === '1';

/** The full-size default, or the smoke default under BENCH_SMOKE=1. */
export function sized<T>(full: T, small: T): T {
  return smoke ? small : full;
}
