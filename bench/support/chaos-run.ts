// What the chaos benchmarks share: the command line (how many faults, the seed, which kinds, which
// cluster), the set-up that undoes itself when a step fails, the kind nodes a run stops, and the
// figures each prints per fault kind.
import { parseArgs } from 'node:util';
import { clusterChoice, kindWorkers, useClusterUnderTest } from '../../e2e/cluster-under-test.ts';
import { isMultiNodeKind, kindClusterUnderTest } from '../../e2e/harness/kind-nodes.ts';
import { requireMultiNodeKind } from '../../e2e/harness/stoppable-node.ts';
import { kindClusterName } from '../../e2e/kind/kind-config.ts';
import { sized } from './bench-size.ts';
import { NodeStops } from './node-stops.ts';
import { seeded } from './seeded-random.ts';
import { Teardown } from './teardown.ts';

export interface ChaosRun<Kind extends string> {
  readonly faultCount: number;
  readonly seed: number;
  readonly kinds: readonly Kind[];
  /** Numbers in [0, 1) from the run's seed: which fault, which member, random delays. */
  readonly random: () => number;
  readonly teardown: Teardown;
  /** Whether the run is on a kind cluster of three or more workers, whose nodes it may stop. */
  readonly onMultiNodeKind: boolean;
  /** The nodes the run stops; each is started again when the run ends, however it ends. */
  readonly nodes: NodeStops;
  /** A set-up step: when it fails, what was set up before it goes too (namespace, release, load). */
  setUp<T>(step: () => Promise<T>): Promise<T>;
}

export interface ChaosKinds<Kind extends string> {
  readonly all: readonly Kind[];
  /** What a run under BENCH_SMOKE=1 causes (CI's `bench:smoke`, on the local cluster). */
  readonly smoke: readonly Kind[];
  /** Kinds that stop a node: only on a kind cluster of three or more workers. */
  readonly nodeStops: readonly Kind[];
}

/**
 * `--faults N` (default 50, 2 under BENCH_SMOKE=1), `--seed S`, `--kinds a,b` (default every kind
 * the cluster allows; the smoke kinds under BENCH_SMOKE=1, so CI proves the harness end to end
 * cheaply), `--cluster kind [--workers 3]` (a kind cluster, brought up or reused with the images
 * loaded, as `npm run e2e -- --cluster kind` does; else the cluster in KUBECONFIG, else the local
 * one). Kinds that stop a node are left out of the default on any other cluster, and asking for
 * them there fails before anything is set up. Resolves once the cluster is ready.
 */
export async function chaosRun<Kind extends string>(
  bench: string,
  kindsOf: ChaosKinds<Kind>,
): Promise<ChaosRun<Kind>> {
  const { values } = parseArgs({
    options: {
      faults: { type: 'string' },
      seed: { type: 'string' },
      kinds: { type: 'string' },
      cluster: { type: 'string' },
      workers: { type: 'string' },
    },
  });
  const cluster = clusterChoice(values.cluster);
  const workers = kindWorkers(values.workers);
  // The cluster the run will use, known before it is brought up.
  const kindCluster = cluster === 'kind' ? { name: kindClusterName, workers } : kindClusterUnderTest();
  const nodeStopsAllowed = isMultiNodeKind(kindCluster);
  const seed = Number(values.seed ?? Date.now() % 1_000_000);
  const defaultKinds = kindsOf.all.filter((k) => nodeStopsAllowed || !kindsOf.nodeStops.includes(k));
  const asked = values.kinds?.split(',') ?? sized([...defaultKinds], [...kindsOf.smoke]);
  const kinds = asked.map((kind) => {
    const known = kindsOf.all.find((k) => k === kind);
    if (!known) throw new Error(`unknown fault kind ${kind}: one of ${kindsOf.all.join(', ')}`);
    return known;
  });
  const stopping = kinds.filter((k) => kindsOf.nodeStops.includes(k));
  if (stopping.length > 0)
    requireMultiNodeKind(
      `${bench}: ${stopping.join(', ')} stop${stopping.length === 1 ? 's' : ''} a node of a kind cluster of three or more workers`,
      `npm run ${bench} -- --cluster kind --workers 3`,
      kindCluster,
    );
  await useClusterUnderTest(cluster, workers);

  const teardown = new Teardown();
  teardown.exitOnSignals(bench);
  return {
    faultCount: Number(values.faults ?? sized(50, 2)),
    seed,
    kinds,
    random: seeded(seed),
    teardown,
    onMultiNodeKind: isMultiNodeKind(),
    nodes: new NodeStops(teardown),
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
