// The scaling benchmark's parts against four real memcached processes on loopback.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashings, openCacheClient, type CacheClient } from './cache-client.ts';
import { benchKeys, movedFraction, readAll, writeAll } from './cache-passes.ts';
import { memcachedServer, type MemcachedServer } from './memcached-process.ts';

const valueBytes = 64;
const keys = benchKeys(1000);
let logDir = '';
let slots: MemcachedServer[] = [];
const opened: CacheClient[] = [];
const open = (servers: readonly MemcachedServer[], hashing: (typeof hashings)[number]) => {
  const cache = openCacheClient(servers, hashing);
  opened.push(cache);
  return cache;
};
const restartAll = async (servers: readonly MemcachedServer[]) => {
  for (const slot of slots) await slot.stop();
  for (const slot of servers) await slot.start();
};

beforeAll(async () => {
  logDir = await mkdtemp(join(tmpdir(), 'homeostat-memcached-test-'));
  for (let i = 0; i < 4; i++) slots.push(await memcachedServer({ name: `memcached-${i}`, logDir }));
});

afterAll(async () => {
  for (const cache of opened) cache.close();
  for (const slot of slots) await slot.stop();
  slots = [];
  await rm(logDir, { recursive: true, force: true });
});

describe('scaling a cache of real memcached servers', () => {
  it('stores each key on the server the client names, and only there', async () => {
    const three = slots.slice(0, 3);
    await restartAll(three);
    const cache = open(three, 'ketama');
    await writeAll(cache, keys, valueBytes);
    const direct = new Map(three.map((s) => [s.name, open([s], 'modulo')]));
    for (const key of keys.slice(0, 50)) {
      for (const [name, single] of direct) {
        const { value } = await single.client.get(key);
        expect(value !== null, `${key} on ${name}`).toBe(name === cache.serverOf(key));
      }
    }
  });

  for (const hashing of hashings) {
    it(`with ${hashing} hashing, hits right after 3 → 4 are exactly the keys that did not move`, async () => {
      const three = slots.slice(0, 3);
      await restartAll(three);
      const before = open(three, hashing);
      await writeAll(before, keys, valueBytes);
      expect(await readAll(before, keys, valueBytes)).toEqual({ hits: keys.length, misses: 0, wrong: 0 });
      const added = slots[3];
      if (!added) throw new Error('no fourth slot');
      await added.start();
      const after = open(slots, hashing);
      const stayed = keys.filter((key) => before.serverOf(key) === after.serverOf(key)).length;
      const counts = await readAll(after, keys, valueBytes);
      expect(counts).toEqual({ hits: stayed, misses: keys.length - stayed, wrong: 0 });
      expect(movedFraction(before, after, keys)).toBe((keys.length - stayed) / keys.length);
    });
  }

  it('with ketama, a removed server takes only its own keys on 4 → 3', async () => {
    await restartAll(slots);
    const before = open(slots, 'ketama');
    await writeAll(before, keys, valueBytes);
    const removed = slots[3];
    if (!removed) throw new Error('no fourth slot');
    const onRemoved = keys.filter((key) => before.serverOf(key) === removed.name).length;
    await removed.stop();
    const counts = await readAll(open(slots.slice(0, 3), 'ketama'), keys, valueBytes);
    expect(counts).toEqual({ hits: keys.length - onRemoved, misses: onRemoved, wrong: 0 });
  });

  it('restarts a slot empty on the same address', async () => {
    const slot = slots[0];
    if (!slot) throw new Error('no slot');
    if (!slot.isRunning()) await slot.start();
    const cache = open([slot], 'modulo');
    await writeAll(cache, keys.slice(0, 10), valueBytes);
    await slot.stop();
    expect(slot.isRunning()).toBe(false);
    await slot.start();
    const again = open([slot], 'modulo');
    expect(again.client.servers[0]?.port).toBe(Number(slot.address.split(':')[1]));
    expect(await readAll(again, keys.slice(0, 10), valueBytes)).toEqual({ hits: 0, misses: 10, wrong: 0 });
  });
});
