import type { KubeObject } from '../client/resource-type.ts';
import { keyOf } from './object-key.ts';

/** Maps an object to the index values it is filed under. */
export type IndexFunction<T> = (obj: T) => string[];

export interface StoreListener<T> {
  onAdd?(obj: T): void;
  onUpdate?(oldObj: T, newObj: T): void;
  onDelete?(obj: T): void;
}

/** Index of objects by namespace. */
export const byNamespace = 'namespace';
/** Index of objects by the UID of each owner. */
export const byOwnerUid = 'ownerUid';

/**
 * The informer's in-memory copy of a kind, keyed by namespace/name, with indexes. Objects are
 * replaced wholesale on each event and never mutated in place; treat what you read as frozen.
 */
export class Store<T extends KubeObject> {
  readonly #items = new Map<string, T>();
  readonly #indexers = new Map<string, IndexFunction<T>>();
  readonly #indexes = new Map<string, Map<string, Set<string>>>();
  readonly #listeners: StoreListener<T>[] = [];

  constructor() {
    this.addIndex(byNamespace, (obj) => (obj.metadata?.namespace ? [obj.metadata.namespace] : []));
    this.addIndex(byOwnerUid, (obj) => (obj.metadata?.ownerReferences ?? []).map((ref) => ref.uid));
  }

  /** Adds a named index; existing objects are indexed at once. */
  addIndex(name: string, fn: IndexFunction<T>): void {
    if (this.#indexers.has(name)) throw new Error(`index "${name}" already exists`);
    this.#indexers.set(name, fn);
    const index = new Map<string, Set<string>>();
    this.#indexes.set(name, index);
    for (const [key, obj] of this.#items) for (const value of fn(obj)) addTo(index, value, key);
  }

  /** Subscribes to changes; listeners run after the store has changed. */
  listen(listener: StoreListener<T>): void {
    this.#listeners.push(listener);
  }

  get(key: string): T | undefined {
    return this.#items.get(key);
  }

  list(): T[] {
    return [...this.#items.values()];
  }

  keys(): string[] {
    return [...this.#items.keys()];
  }

  get size(): number {
    return this.#items.size;
  }

  /** Objects filed under `value` in the index `name`. */
  byIndex(name: string, value: string): T[] {
    const index = this.#indexes.get(name);
    if (!index) throw new Error(`no index named "${name}"`);
    return [...(index.get(value) ?? [])]
      .map((key) => this.#items.get(key))
      .filter((obj): obj is T => obj !== undefined);
  }

  upsert(obj: T): void {
    const key = keyOf(obj);
    const old = this.#items.get(key);
    if (old) this.#unindex(key, old);
    this.#items.set(key, obj);
    this.#index(key, obj);
    for (const l of this.#listeners) {
      if (old) l.onUpdate?.(old, obj);
      else l.onAdd?.(obj);
    }
  }

  remove(obj: T): void {
    const key = keyOf(obj);
    const old = this.#items.get(key);
    if (!old) return;
    this.#unindex(key, old);
    this.#items.delete(key);
    // Report the final state from the delete event when there is one: it is the newer.
    for (const l of this.#listeners) l.onDelete?.(obj);
  }

  /**
   * Replaces everything in `scope` (a namespace, or all when undefined) with a fresh list:
   * objects missing from it are deleted, the rest upserted. Used after a (re)list, so a delete
   * that happened while no watch was open is still seen.
   */
  replace(items: readonly T[], scope?: string): void {
    const fresh = new Set(items.map(keyOf));
    for (const [key, obj] of [...this.#items]) {
      if (scope !== undefined && obj.metadata?.namespace !== scope) continue;
      if (!fresh.has(key)) this.remove(obj);
    }
    for (const obj of items) {
      const old = this.#items.get(keyOf(obj));
      if (old?.metadata?.resourceVersion === obj.metadata?.resourceVersion && old !== undefined) continue;
      this.upsert(obj);
    }
  }

  /** Tells listeners about every object again (periodic resync). */
  resync(): void {
    for (const obj of this.#items.values()) for (const l of this.#listeners) l.onUpdate?.(obj, obj);
  }

  #index(key: string, obj: T): void {
    for (const [name, fn] of this.#indexers) {
      const index = this.#indexes.get(name);
      if (index) for (const value of fn(obj)) addTo(index, value, key);
    }
  }

  #unindex(key: string, obj: T): void {
    for (const [name, fn] of this.#indexers) {
      const index = this.#indexes.get(name);
      if (!index) continue;
      for (const value of fn(obj)) {
        const keys = index.get(value);
        keys?.delete(key);
        if (keys?.size === 0) index.delete(value);
      }
    }
  }
}

function addTo(index: Map<string, Set<string>>, value: string, key: string): void {
  let keys = index.get(value);
  if (!keys) index.set(value, (keys = new Set()));
  keys.add(key);
}
