import { sameValues } from './applied-state.ts';

/**
 * True when every field `desired` sets has the same value in `actual` (extra fields in `actual`,
 * such as server defaults and status, are ignored; resource quantities compare by value).
 * It cannot see a field dropped from the desired state: to decide whether to write, use
 * `client.applyIfChanged` / `applyStatusIfChanged`, which also read the field manager's ownership.
 */
export function isSubset(desired: unknown, actual: unknown): boolean {
  return sameValues(desired, actual);
}
