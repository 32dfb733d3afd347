// Server choice alone: memjs only connects on a request, so no server runs here.
import { describe, expect, it } from 'vitest';
import { openCacheClient, type Hashing, type ServerEntry } from './cache-client.ts';
import { benchKeys } from './cache-passes.ts';

const slot = (i: number, port = 21_000 + i): ServerEntry => ({
  name: `memcached-${i}`,
  address: `127.0.0.1:${port}`,
});
const keys = benchKeys(10_000);

/** Where each key goes through a client over `servers` with `hashing`. */
function placement(servers: readonly ServerEntry[], hashing: Hashing): string[] {
  const cache = openCacheClient(servers, hashing);
  try {
    return keys.map((key) => cache.serverOf(key));
  } finally {
    cache.close();
  }
}

const movedShare = (before: readonly string[], after: readonly string[]) =>
  before.filter((name, i) => after[i] !== name).length / before.length;

describe('choosing a memcached server for a key (memjs, modulo and a ketama ring)', () => {
  const three = [slot(0), slot(1), slot(2)];
  const four = [...three, slot(3)];

  it('spreads keys over every server with both hashings', () => {
    for (const hashing of ['modulo', 'ketama'] as const) {
      const counts = new Map<string, number>();
      for (const name of placement(four, hashing)) counts.set(name, (counts.get(name) ?? 0) + 1);
      expect([...counts.keys()].sort()).toEqual(four.map((s) => s.name));
      for (const count of counts.values()) expect(count).toBeGreaterThan(keys.length / 8);
    }
  });

  it('moves only the added server share on 3 → 4 with ketama, and most keys with modulo', () => {
    const before = placement(three, 'ketama');
    const after = placement(four, 'ketama');
    after.forEach((name, i) => {
      if (name !== before[i]) expect(name).toBe('memcached-3');
    });
    expect(movedShare(before, after)).toBeGreaterThan(0.15);
    expect(movedShare(before, after)).toBeLessThan(0.35);
    expect(movedShare(placement(three, 'modulo'), placement(four, 'modulo'))).toBeGreaterThan(0.65);
  });

  it('moves only the removed server keys on 4 → 3 with ketama', () => {
    const before = placement(four, 'ketama');
    const after = placement(three, 'ketama');
    before.forEach((name, i) => {
      if (after[i] !== name) expect(name).toBe('memcached-3');
    });
  });

  it('keys the ring by stable names: new addresses or another order move no key', () => {
    const before = placement(four, 'ketama');
    const readdressed = four.map((s, i) => slot(i, 22_000 + i));
    expect(placement(readdressed, 'ketama')).toEqual(before);
    expect(placement([...four].reverse(), 'ketama')).toEqual(before);
    // Modulo picks by position: the published list's order is part of the mapping.
    expect(movedShare(placement(four, 'modulo'), placement([...four].reverse(), 'modulo'))).toBeGreaterThan(
      0.5,
    );
  });
});
