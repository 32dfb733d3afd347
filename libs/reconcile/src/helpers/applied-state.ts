// Decides whether a server-side apply would change anything, from what the cache already holds.
//
// Comparing the desired object with the live one ("is desired a subset of live?") cannot see a
// removal: a field the operator used to set and no longer does is still on the live object, so
// desired stays a subset and the apply that would drop it is never sent. The API server records,
// per field manager, which fields each one owns (metadata.managedFields); a field this operator's
// manager owns that the desired object no longer sets is exactly what the next apply removes.
import type { KubeObject, ManagedFieldsEntry } from '../client/resource-type.ts';
import { quantityValue } from './quantity.ts';

export interface AppliedStateOptions {
  /** The server-side apply field manager the operator writes with. */
  fieldManager: string;
  /** Compare against what the manager applied to this subresource (e.g. 'status'). */
  subresource?: 'status';
}

/**
 * True when server-side applying `desired` as `fieldManager` would change nothing on `live`:
 * every field `desired` sets has that value on `live`, and `live` has no field this manager owns
 * that `desired` no longer sets. False when `live` is missing or this manager never applied it.
 */
export function isApplied(
  desired: object,
  live: KubeObject | undefined,
  options: AppliedStateOptions,
): boolean {
  if (!live) return false;
  const owned = ownedFields(live, options);
  // Never applied by this manager: one apply makes it own what it states, so later removals show.
  if (!owned) return false;
  return sameValues(desired, live) && !ownsBeyond(owned, desired);
}

/** The field set `fieldManager` applied to `obj` (or to its subresource), if it ever did. */
export function ownedFields(obj: KubeObject, options: AppliedStateOptions): FieldSet | undefined {
  const entry = obj.metadata?.managedFields?.find(
    (e: ManagedFieldsEntry) =>
      e.manager === options.fieldManager &&
      e.operation === 'Apply' &&
      (e.subresource ?? '') === (options.subresource ?? ''),
  );
  return entry ? ((entry.fieldsV1 ?? {}) as FieldSet) : undefined;
}

/**
 * The object without other field managers' managedFields entries: all a cache needs for
 * `isApplied`, at a fraction of the memory (an object written by several clients carries an entry
 * per client, often larger than its spec). What controller-runtime users get with a cache
 * transform that strips managedFields, keeping the one entry that decides convergence. An operator
 * that also writes under secondary field managers names them all, so their clients' applyIfChanged
 * sees their entries too.
 */
export function keepOwnManagedFields(
  fieldManager: string | readonly string[],
): (obj: KubeObject) => KubeObject {
  const managers = new Set(typeof fieldManager === 'string' ? [fieldManager] : fieldManager);
  return (obj) => {
    const entries = obj.metadata?.managedFields;
    if (!entries?.length) return obj;
    const own = entries.filter(
      (e) => e.manager !== undefined && managers.has(e.manager) && e.operation === 'Apply',
    );
    if (own.length === entries.length) return obj;
    return { ...obj, metadata: { ...obj.metadata, managedFields: own } };
  };
}

/** A managedFields `fieldsV1` tree. */
export interface FieldSet {
  [key: string]: FieldSet;
}

const absent = Symbol('absent');

// True when `owned` names a field (or list item) that `desired` does not set.
function ownsBeyond(owned: FieldSet, desired: unknown): boolean {
  for (const [key, child] of Object.entries(owned)) {
    if (key === '.') continue;
    const next = member(desired, key);
    if (next === absent || ownsBeyond(child, next)) return true;
  }
  return false;
}

// The part of `desired` a fieldsV1 key points at, or `absent`.
function member(desired: unknown, key: string): unknown {
  const kind = key.slice(0, 2);
  const rest = key.slice(2);
  if (kind === 'f:') {
    if (!isRecord(desired)) return absent;
    const value = desired[rest];
    return value === undefined || value === null ? absent : value;
  }
  if (!Array.isArray(desired)) return absent;
  if (kind === 'k:') {
    const keys = JSON.parse(rest) as Record<string, unknown>;
    // The server records the item's key after defaulting (a port's protocol: TCP), so a key field
    // the desired item leaves out matches whatever the server filled in.
    const item: unknown = desired.find(
      (candidate) =>
        isRecord(candidate) &&
        Object.entries(keys).every(([k, v]) => candidate[k] === undefined || deepEqual(candidate[k], v)),
    );
    return item === undefined ? absent : item;
  }
  if (kind === 'v:') {
    const value: unknown = JSON.parse(rest);
    return desired.some((d) => deepEqual(d, value)) ? value : absent;
  }
  if (kind === 'i:') {
    const item: unknown = desired[Number(rest)];
    return item === undefined ? absent : item;
  }
  return absent;
}

/**
 * True when every field `desired` sets has the same value in `actual`; extra fields in `actual`
 * (server defaults, other managers' fields, status) are ignored. Arrays match element by element.
 * Resource quantities compare by value, as the API server rewrites them ("1024Mi" is "1Gi").
 */
export function sameValues(desired: unknown, actual: unknown, key = '', inQuantityMap = false): boolean {
  if (desired === actual) return true;
  if (Array.isArray(desired)) {
    return (
      Array.isArray(actual) &&
      desired.length === actual.length &&
      desired.every((d, i) => sameValues(d, actual[i]))
    );
  }
  if (isRecord(desired)) {
    if (!isRecord(actual)) return false;
    const quantities = quantityMaps.has(key);
    return Object.entries(desired).every(
      ([k, value]) => value === undefined || sameValues(value, actual[k], k, quantities),
    );
  }
  if (inQuantityMap || quantityFields.has(key)) return sameQuantity(desired, actual);
  return false;
}

// Where Kubernetes objects hold quantities: resource lists (requests, limits, a PVC's capacity,
// a quota's hard and used), and single fields such as an emptyDir's sizeLimit.
const quantityMaps = new Set(['requests', 'limits', 'capacity', 'allocatable', 'hard', 'used']);
const quantityFields = new Set(['sizeLimit']);

function sameQuantity(desired: unknown, actual: unknown): boolean {
  if (typeof desired !== 'string' && typeof desired !== 'number') return false;
  if (typeof actual !== 'string' && typeof actual !== 'number') return false;
  const a = quantityValue(desired);
  return a !== undefined && a === quantityValue(actual);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a))
    return Array.isArray(b) && a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  if (isRecord(a)) {
    if (!isRecord(b)) return false;
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => deepEqual(a[k], b[k]));
  }
  return false;
}
