// What the chaos benchmarks share: the command line (how many faults, the seed, which kinds), the
// set-up that undoes itself when a step fails, and the figures each prints per fault kind.
import { parseArgs } from 'node:util';
import { sized } from './bench-size.ts';
import { seeded } from './seeded-random.ts';
import { Teardown } from './teardown.ts';

export interface ChaosRun<Kind extends string> {
  readonly faultCount: number;
  readonly seed: number;
  readonly kinds: readonly Kind[];
  /** Numbers in [0, 1) from the run's seed: which fault, which member, random delays. */
  readonly random: () => number;
  readonly teardown: Teardown;
  /** A set-up step: when it fails, what was set up before it goes too (namespace, release, load). */
  setUp<T>(step: () => Promise<T>): Promise<T>;
}

/**
 * `--faults N` (default 50, 2 under BENCH_SMOKE=1), `--seed S`, `--kinds a,b` (default every kind;
 * `smokeKinds` under BENCH_SMOKE=1, so CI proves the harness end to end cheaply).
 */
export function chaosRun<Kind extends string>(
  bench: string,
  allKinds: readonly Kind[],
  smokeKinds: readonly Kind[],
): ChaosRun<Kind> {
  const teardown = new Teardown();
  teardown.exitOnSignals(bench);
  const { values } = parseArgs({
    options: { faults: { type: 'string' }, seed: { type: 'string' }, kinds: { type: 'string' } },
  });
  const seed = Number(values.seed ?? Date.now() % 1_000_000);
  const asked = values.kinds?.split(',') ?? sized([...allKinds], [...smokeKinds]);
  const kinds = asked.map((kind) => {
    const known = allKinds.find((k) => k === kind);
    if (!known) throw new Error(`unknown fault kind ${kind}: one of ${allKinds.join(', ')}`);
    return known;
  });
  return {
    faultCount: Number(values.faults ?? sized(50, 2)),
    seed,
    kinds,
    random: seeded(seed),
    teardown,
    async setUp(step) {
      try {
        return await step();
      } catch (error) {
        await teardown.run();
        throw error;
      }
    },
  };
}

/** The first line of an error's message, for one-line reports. */
export const firstLine = (error: unknown): string =>
  (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? '';

/** The median of `xs` to two decimals, or null when empty (JSON figures). */
export function median(xs: readonly number[]): number | null {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? Number((s[Math.floor((s.length - 1) / 2)] ?? 0).toFixed(2)) : null;
}

/** The largest of `xs` to two decimals, or null when empty. */
export function max(xs: readonly number[]): number | null {
  return xs.length ? Number(Math.max(...xs).toFixed(2)) : null;
}
