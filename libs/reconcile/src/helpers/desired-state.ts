/**
 * True when every field `desired` sets has the same value in `actual` (extra fields in `actual`,
 * such as server defaults and status, are ignored). Reconcilers compare the desired object with
 * the cached one and skip the write when this holds, so a converged object causes no writes.
 * Arrays must match element by element. Values the API server normalises (quantities such as
 * "0.5" vs "500m") must be written in their normal form to compare equal.
 */
export function isSubset(desired: unknown, actual: unknown): boolean {
  if (desired === actual) return true;
  if (Array.isArray(desired)) {
    return (
      Array.isArray(actual) &&
      desired.length === actual.length &&
      desired.every((d, i) => isSubset(d, actual[i]))
    );
  }
  if (typeof desired === 'object' && desired !== null) {
    if (typeof actual !== 'object' || actual === null || Array.isArray(actual)) return false;
    const actualRecord = actual as Record<string, unknown>;
    return Object.entries(desired).every(
      ([key, value]) => value === undefined || isSubset(value, actualRecord[key]),
    );
  }
  return false;
}
