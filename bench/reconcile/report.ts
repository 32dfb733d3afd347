// What bench:reconcile prints: one JSON line per implementation and a ratio line on stdout (for
// scripts and the README), and a table for people on stderr.
import type { Implementation } from './operators.ts';

export interface RunResult {
  implementation: Implementation;
  objects: number;
  workers: number;
  seconds_to_converge: number;
  objects_per_second: number;
  reconciles: number;
  reconciles_per_second: number;
  /** Writes by the operator from the first Widget until it went quiet (the driver's creates excluded). */
  operator_writes_to_converge: number;
  idle_writes_per_minute: number;
  /** CPU seconds (user + system) the operator used from the first Widget to convergence. */
  cpu_seconds_to_converge: number;
  /** Once its controller runs, before any Widget exists. */
  rss_start_mb: number;
  /** At the end of the idle window after convergence. */
  rss_mb: number;
  peak_rss_mb: number;
}

export interface Ratios {
  ratio: string;
  objects: number;
  /** Objects per second, first over second: above 1 the first is faster. */
  throughput: number;
  reconciles_per_second: number;
  rss: number;
  peak_rss: number;
  rss_start: number;
  /** CPU seconds to converge, first over second: above 1 the first used more. */
  cpu: number;
}

const round = (x: number, digits: number) => Number(x.toFixed(digits));

/** The first implementation's figures over the second's. */
export function ratios(first: RunResult, second: RunResult): Ratios {
  return {
    ratio: `${first.implementation}/${second.implementation}`,
    objects: first.objects,
    throughput: round(first.objects_per_second / second.objects_per_second, 2),
    reconciles_per_second: round(first.reconciles_per_second / second.reconciles_per_second, 2),
    rss: round(first.rss_mb / second.rss_mb, 2),
    peak_rss: round(first.peak_rss_mb / second.peak_rss_mb, 2),
    rss_start: round(first.rss_start_mb / second.rss_start_mb, 2),
    cpu: round(first.cpu_seconds_to_converge / second.cpu_seconds_to_converge, 2),
  };
}

const rows: [label: string, key: keyof RunResult, ratio?: keyof Ratios][] = [
  ['seconds to converge', 'seconds_to_converge'],
  ['objects per second', 'objects_per_second', 'throughput'],
  ['reconciles', 'reconciles'],
  ['reconciles per second', 'reconciles_per_second', 'reconciles_per_second'],
  ['operator writes to converge', 'operator_writes_to_converge'],
  ['idle writes per minute', 'idle_writes_per_minute'],
  ['CPU seconds to converge', 'cpu_seconds_to_converge', 'cpu'],
  ['RSS before any object (MB)', 'rss_start_mb', 'rss_start'],
  ['RSS after convergence (MB)', 'rss_mb', 'rss'],
  ['peak RSS (MB)', 'peak_rss_mb', 'peak_rss'],
];

/** A plain-text table of the results side by side, with the ratio column when there are two. */
export function table(results: readonly RunResult[], ratio: Ratios | undefined): string {
  const header = ['', ...results.map((r) => r.implementation), ...(ratio ? ['ratio'] : [])];
  const body = rows.map(([label, key, ratioKey]) => [
    label,
    ...results.map((r) => String(r[key])),
    ...(ratio ? [ratioKey ? String(ratio[ratioKey]) : ''] : []),
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
