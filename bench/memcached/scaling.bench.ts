// npm run bench:memcached-scaling -- [--keys N] [--value-bytes B] [--concurrency C]
// Scaling without a miss storm: how many reads still hit right after a memcached
// cache's server set changes, with modulo hashing against consistent (ketama) hashing, measured
// with the same client (memjs) against the same real memcached servers in one run. Four server
// slots on fixed loopback ports stand for the pods of a Memcached `cache` in namespace `bench`, each
// named by the address the operator publishes for it (status.servers, the ConfigMap cache-servers:
// cache-0.cache.bench.svc:11211 …), built by the operator's own serverAddresses; the ketama ring is
// keyed by those strings, as a client reading the published list keys it. Per hashing:
//   3 → 4: three empty servers are warmed with N keys (default 100000; 2000 under BENCH_SMOKE=1)
//          and read back (every key must hit), cache-3 is added empty, and every key is read
//          once through a client over the four;
//   4 → 3: four empty servers are warmed and read back the same way, cache-3 is stopped (a pod
//          removed takes its items with it), and every key is read once through the three.
// Each change starts from servers warmed at the "before" set only: a copy left over from before a
// scale-up would count as a hit on the way back down although it says nothing about remapping (and
// would be stale in a real workload). Prints keys written, the fraction of keys the new set sends
// elsewhere, the hit ratio right after each change, and the time of each pass; one JSON line last.
// It asserts nothing about time; it fails only when the cache lost or garbled keys, which would
// make the hit ratios meaningless.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { serverAddresses } from '@homeostat/memcached-operator';
import { sized } from '../support/bench-size.ts';
import { loadAverage } from '../support/load-average.ts';
import { Teardown } from '../support/teardown.ts';
import { hashings, openCacheClient, type CacheClient, type Hashing } from './cache-client.ts';
import { benchKeys, movedFraction, readAll, writeAll } from './cache-passes.ts';
import { memcachedServer, type MemcachedServer } from './memcached-process.ts';

const { values } = parseArgs({
  options: {
    keys: { type: 'string', default: sized('100000', '2000') },
    'value-bytes': { type: 'string', default: '100' },
    concurrency: { type: 'string', default: '64' },
  },
});
const keyCount = Number(values.keys);
const valueBytes = Number(values['value-bytes']);
const concurrency = Number(values.concurrency);
const say = (line: string) => console.error(`bench:memcached-scaling ${line}`);
const round = (x: number, digits = 4) => Number(x.toFixed(digits));

async function timed<T>(work: () => Promise<T>): Promise<[T, number]> {
  const start = performance.now();
  const result = await work();
  return [result, (performance.now() - start) / 1000];
}

interface ChangeFigures {
  change: '3→4' | '4→3';
  keys_written: number;
  warm_seconds: number;
  moved_fraction: number;
  hit_ratio_after: number;
  read_after_seconds: number;
}

const teardown = new Teardown();
teardown.exitOnSignals('bench:memcached-scaling');
const started = performance.now();
try {
  const logDir = await mkdtemp(join(tmpdir(), 'homeostat-bench-memcached-'));
  teardown.add('remove the logs', () => rm(logDir, { recursive: true, force: true }));
  // Room for every key on one server, twice over: an eviction would read as a remapping miss.
  const memoryMb = Math.max(64, Math.ceil((2 * keyCount * (valueBytes + 100)) / (1024 * 1024)));
  // What the operator publishes at size 4, and at size 3: the same list without its last entry.
  const cache = { name: 'cache', namespace: 'bench', port: 11211 };
  const published = serverAddresses({ ...cache, size: 4 });
  if (serverAddresses({ ...cache, size: 3 }).join() !== published.slice(0, 3).join()) {
    throw new Error('the published list at size 3 is not the list at size 4 without its last server');
  }
  const slots: MemcachedServer[] = [];
  for (const name of published) {
    const slot = await memcachedServer({ name, logDir, memoryMb });
    teardown.add(`stop ${slot.name}`, () => slot.stop());
    slots.push(slot);
  }
  const [m0, m1, m2, m3] = slots;
  if (!m0 || !m1 || !m2 || !m3) throw new Error('four server slots expected');
  const three = [m0, m1, m2];
  const four = [m0, m1, m2, m3];
  const keys = benchKeys(keyCount);
  say(
    `${keyCount} keys of ${valueBytes} bytes, ${concurrency} requests in flight, servers ` +
      `${four.map((s) => `${s.name}=${s.address}`).join(' ')}; load average ${loadAverage()}`,
  );

  const open = (servers: readonly MemcachedServer[], hashing: Hashing): CacheClient => {
    const cache = openCacheClient(servers, hashing);
    teardown.add(`close a ${hashing} client`, () => cache.close());
    return cache;
  };
  /** Every slot stopped, then `servers` started empty. */
  const freshServers = async (servers: readonly MemcachedServer[]) => {
    for (const slot of slots) await slot.stop();
    for (const slot of servers) await slot.start();
  };
  /** Warms `cache` with every key and checks each reads back: nothing lost before the change. */
  const warm = async (cache: CacheClient): Promise<number> => {
    const [, seconds] = await timed(() => writeAll(cache, keys, valueBytes, concurrency));
    const check = await readAll(cache, keys, valueBytes, concurrency);
    if (check.hits !== keyCount)
      throw new Error(`warm cache lost keys before any change: ${JSON.stringify(check)}`);
    return seconds;
  };
  const measure = async (
    change: ChangeFigures['change'],
    before: CacheClient,
    after: CacheClient,
    warmSeconds: number,
  ): Promise<ChangeFigures> => {
    const moved = movedFraction(before, after, keys);
    const [counts, seconds] = await timed(() => readAll(after, keys, valueBytes, concurrency));
    if (counts.wrong > 0) throw new Error(`${counts.wrong} keys read another key's value after ${change}`);
    return {
      change,
      keys_written: keyCount,
      warm_seconds: round(warmSeconds, 2),
      moved_fraction: round(moved),
      hit_ratio_after: round(counts.hits / keyCount),
      read_after_seconds: round(seconds, 2),
    };
  };

  const results: Record<Hashing, ChangeFigures[]> = { modulo: [], ketama: [] };
  for (const hashing of hashings) {
    // 3 → 4: cache-3 joins empty, as a new pod does.
    await freshServers(three);
    const beforeUp = open(three, hashing);
    const warmUp = await warm(beforeUp);
    await m3.start();
    const afterUp = open(four, hashing);
    results[hashing].push(await measure('3→4', beforeUp, afterUp, warmUp));
    beforeUp.close();
    afterUp.close();

    // 4 → 3: cache-3 leaves with everything it held.
    await freshServers(four);
    const beforeDown = open(four, hashing);
    const warmDown = await warm(beforeDown);
    beforeDown.close();
    await m3.stop();
    const afterDown = open(three, hashing);
    results[hashing].push(await measure('4→3', beforeDown, afterDown, warmDown));
    afterDown.close();
    for (const figures of results[hashing]) {
      say(
        `${hashing.padEnd(6)} ${figures.change}: ${figures.keys_written} keys written in ${figures.warm_seconds} s, ` +
          `${(figures.moved_fraction * 100).toFixed(1)} % moved, hit ratio right after ` +
          `${(figures.hit_ratio_after * 100).toFixed(1)} % (read of every key ${figures.read_after_seconds} s)`,
      );
    }
  }
  for (const slot of slots) await slot.stop();

  const seconds = (performance.now() - started) / 1000;
  const byChange = (hashing: Hashing, change: ChangeFigures['change']) =>
    results[hashing].find((f) => f.change === change);
  say(
    `after 3→4: ketama ${(100 * (byChange('ketama', '3→4')?.hit_ratio_after ?? 0)).toFixed(1)} % hits, ` +
      `modulo ${(100 * (byChange('modulo', '3→4')?.hit_ratio_after ?? 0)).toFixed(1)} %; after 4→3: ketama ` +
      `${(100 * (byChange('ketama', '4→3')?.hit_ratio_after ?? 0)).toFixed(1)} %, modulo ` +
      `${(100 * (byChange('modulo', '4→3')?.hit_ratio_after ?? 0)).toFixed(1)} %; ${seconds.toFixed(1)} s in all; ` +
      `load average ${loadAverage()}`,
  );
  process.stdout.write(
    `${JSON.stringify({
      keys: keyCount,
      value_bytes: valueBytes,
      keys_written: keyCount * 2 * hashings.length,
      client: 'memjs',
      ring: 'hashring (ketama)',
      ring_keys: published,
      results,
      seconds: round(seconds, 1),
      load_average: loadAverage(),
    })}\n`,
  );
} finally {
  await teardown.run();
}
