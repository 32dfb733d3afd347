// What bench:reconcile prints: one JSON line per implementation and a ratio line on stdout (for
// scripts and the README), and a table for people on stderr.
import type { Implementation } from './operators.ts';

export interface RunResult {
  implementation: Implementation;
  /** The implementations of this run's round, in the order they ran (this one among them). */
  order: string;
  objects: number;
  workers: number;
  /** The machine's 1-minute load average when the Widgets were created and when they converged. */
  load_average_start: number;
  load_average_converged: number;
  seconds_to_converge: number;
  objects_per_second: number;
  reconciles: number;
  reconciles_per_second: number;
  /** Mean seconds one reconcile took (controller_runtime_reconcile_time_seconds sum over count). */
  reconcile_seconds_mean: number;
  /** Writes by the operator from the first Widget until it went quiet (the driver's creates excluded). */
  operator_writes_to_converge: number;
  /** Mean ms the API server itself spent per write of the workload (the driver's creates included). */
  apiserver_ms_per_write: number;
  idle_writes_per_minute: number;
  /** CPU seconds (user + system) the operator used from the first Widget to convergence. */
  cpu_seconds_to_converge: number;
  /** Once its controller runs, before any Widget exists. */
  rss_start_mb: number;
  /** The high-water mark by then: what starting alone cost at its peak. */
  peak_rss_start_mb: number;
  /** At the end of the idle window after convergence. */
  rss_mb: number;
  peak_rss_mb: number;
  /** Of rss_mb: anonymous pages (heaps, stacks) and pages of mapped files (the executable). */
  rss_anonymous_mb: number;
  rss_file_mb: number;
}

/**
 * A ratio of two figures, or null when the second is zero: at smoke size an implementation can
 * converge within one CPU tick, and "Infinity" (null once in JSON anyway) reads like a result.
 */
export type Ratio = number | null;

export interface Ratios {
  ratio: string;
  /** Which ran first. */
  order: string;
  objects: number;
  /** Objects per second, first over second: above 1 the first is faster. */
  throughput: Ratio;
  reconciles_per_second: Ratio;
  rss: Ratio;
  peak_rss: Ratio;
  rss_start: Ratio;
  /** CPU seconds to converge, first over second: above 1 the first used more. */
  cpu: Ratio;
}

const round = (x: number, digits: number) => Number(x.toFixed(digits));
const ratioOf = (first: number, second: number): Ratio => (second === 0 ? null : round(first / second, 2));

/** The first implementation's figures over the second's (whichever of them ran first). */
export function ratios(first: RunResult, second: RunResult): Ratios {
  return {
    ratio: `${first.implementation}/${second.implementation}`,
    order: first.order,
    objects: first.objects,
    throughput: ratioOf(first.objects_per_second, second.objects_per_second),
    reconciles_per_second: ratioOf(first.reconciles_per_second, second.reconciles_per_second),
    rss: ratioOf(first.rss_mb, second.rss_mb),
    peak_rss: ratioOf(first.peak_rss_mb, second.peak_rss_mb),
    rss_start: ratioOf(first.rss_start_mb, second.rss_start_mb),
    cpu: ratioOf(first.cpu_seconds_to_converge, second.cpu_seconds_to_converge),
  };
}

/** The ratios of both orders together: neither implementation always ran on the warmer control plane. */
export interface BothOrders {
  ratio: string;
  orders: string[];
  objects: number;
  /** Geometric mean of the throughput ratios, and the lowest and highest of them. */
  throughput: Ratio;
  throughput_min: Ratio;
  throughput_max: Ratio;
  /** The highest RSS ratios (the targets are upper bounds). */
  rss_max: Ratio;
  peak_rss_max: Ratio;
  /** Geometric mean of the CPU ratios. */
  cpu: Ratio;
}

/** Every ratio, or null when a round has none: a summary of fewer rounds than ran would mislead. */
function known(xs: readonly Ratio[]): number[] | null {
  const numbers: number[] = [];
  for (const x of xs) {
    if (x === null) return null;
    numbers.push(x);
  }
  return numbers.length > 0 ? numbers : null;
}
const geometricMean = (xs: readonly Ratio[]): Ratio => {
  const numbers = known(xs);
  return numbers
    ? round(Math.exp(numbers.reduce((sum, x) => sum + Math.log(x), 0) / numbers.length), 2)
    : null;
};
const lowest = (xs: readonly Ratio[]): Ratio => {
  const numbers = known(xs);
  return numbers ? Math.min(...numbers) : null;
};
const highest = (xs: readonly Ratio[]): Ratio => {
  const numbers = known(xs);
  return numbers ? Math.max(...numbers) : null;
};

/** Summarises the ratios of rounds run in different orders. */
export function bothOrders(rounds: readonly Ratios[]): BothOrders {
  const throughputs = rounds.map((r) => r.throughput);
  return {
    ratio: rounds[0]?.ratio ?? '',
    orders: rounds.map((r) => r.order),
    objects: rounds[0]?.objects ?? 0,
    throughput: geometricMean(throughputs),
    throughput_min: lowest(throughputs),
    throughput_max: highest(throughputs),
    rss_max: highest(rounds.map((r) => r.rss)),
    peak_rss_max: highest(rounds.map((r) => r.peak_rss)),
    cpu: geometricMean(rounds.map((r) => r.cpu)),
  };
}

const rows: [label: string, key: keyof RunResult, ratio?: keyof Ratios][] = [
  ['order of the round', 'order'],
  ['load average at start', 'load_average_start'],
  ['load average at convergence', 'load_average_converged'],
  ['seconds to converge', 'seconds_to_converge'],
  ['objects per second', 'objects_per_second', 'throughput'],
  ['reconciles', 'reconciles'],
  ['reconciles per second', 'reconciles_per_second', 'reconciles_per_second'],
  ['mean seconds per reconcile', 'reconcile_seconds_mean'],
  ['operator writes to converge', 'operator_writes_to_converge'],
  ['API server ms per write (mean)', 'apiserver_ms_per_write'],
  ['idle writes per minute', 'idle_writes_per_minute'],
  ['CPU seconds to converge', 'cpu_seconds_to_converge', 'cpu'],
  ['RSS before any object (MB)', 'rss_start_mb', 'rss_start'],
  ['peak RSS before any object (MB)', 'peak_rss_start_mb'],
  ['RSS after convergence (MB)', 'rss_mb', 'rss'],
  ['peak RSS (MB)', 'peak_rss_mb', 'peak_rss'],
  ['of RSS: anonymous (MB)', 'rss_anonymous_mb'],
  ['of RSS: mapped files (MB)', 'rss_file_mb'],
];

/** A plain-text table of the results side by side, with the ratio column when there are two. */
export function table(results: readonly RunResult[], ratio: Ratios | undefined): string {
  const header = ['', ...results.map((r) => r.implementation), ...(ratio ? ['ratio'] : [])];
  const body = rows.map(([label, key, ratioKey]) => [
    label,
    ...results.map((r) => String(r[key])),
    ...(ratio ? [ratioKey ? String(ratio[ratioKey] ?? 'n/a') : ''] : []),
  ]);
  const widths = header.map((_, column) =>
    Math.max(...[header, ...body].map((row) => (row[column] ?? '').length)),
  );
  return [header, ...body]
    .map((row) =>
      row
        .map((cell, column) =>
          column === 0 ? cell.padEnd(widths[0] ?? 0) : cell.padStart(widths[column] ?? 0),
        )
        .join('  '),
    )
    .join('\n');
}
