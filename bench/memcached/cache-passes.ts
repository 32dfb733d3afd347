// Passes over every key of a cache: write them all (warming), read them all (counting hits), and
// how many keys a change of server set sends to another server.
import type { CacheClient } from './cache-client.ts';

/** The benchmark's keys, `count` of them. */
export const benchKeys = (count: number): string[] => Array.from({ length: count }, (_, i) => `key-${i}`);

/** The value stored under `key`, padded to `bytes`, so a read can check it got this key's value. */
export const valueOf = (key: string, bytes: number): string => `${key}:`.padEnd(bytes, '.');

/** Runs `work` on every key with at most `concurrency` requests in flight (memjs pipelines them). */
async function eachKey(
  keys: readonly string[],
  concurrency: number,
  work: (key: string) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < keys.length) {
      const key = keys[next++];
      if (key !== undefined) await work(key);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, keys.length)) }, worker));
}

/** Sets every key to its value; fails if memcached refuses one. */
export async function writeAll(
  cache: CacheClient,
  keys: readonly string[],
  valueBytes: number,
  concurrency = 64,
): Promise<void> {
  await eachKey(keys, concurrency, async (key) => {
    if (!(await cache.client.set(key, valueOf(key, valueBytes))))
      throw new Error(`memcached did not store ${key}`);
  });
}

export interface ReadCounts {
  hits: number;
  misses: number;
  /** Hits whose value was not the one written for that key: always 0 unless something is broken. */
  wrong: number;
}

/** Gets every key once and counts hits (the right value), misses and wrong values. */
export async function readAll(
  cache: CacheClient,
  keys: readonly string[],
  valueBytes: number,
  concurrency = 64,
): Promise<ReadCounts> {
  const counts: ReadCounts = { hits: 0, misses: 0, wrong: 0 };
  await eachKey(keys, concurrency, async (key) => {
    const { value } = await cache.client.get(key);
    if (value === null) counts.misses++;
    else if (value.toString() === valueOf(key, valueBytes)) counts.hits++;
    else counts.wrong++;
  });
  return counts;
}

/** The fraction of `keys` that `after` sends to another server than `before` does. */
export function movedFraction(before: CacheClient, after: CacheClient, keys: readonly string[]): number {
  if (keys.length === 0) return 0;
  const moved = keys.filter((key) => before.serverOf(key) !== after.serverOf(key)).length;
  return moved / keys.length;
}
