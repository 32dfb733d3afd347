/** The value, or a test failure naming what was missing (instead of a non-null assertion). */
export function must<T>(value: T | undefined | null, what: string): T {
  if (value === undefined || value === null) throw new Error(`test setup: ${what} is missing`);
  return value;
}
