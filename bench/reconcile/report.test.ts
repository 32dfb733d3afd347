import { describe, expect, it } from 'vitest';
import { bothOrders, ratios, table, type RunResult } from './report.ts';

const run = (implementation: RunResult['implementation'], figures: Partial<RunResult>): RunResult => ({
  implementation,
  order: 'typescript,controller-runtime',
  objects: 20,
  workers: 4,
  load_average_start: 1,
  load_average_converged: 1,
  seconds_to_converge: 0.1,
  objects_per_second: 200,
  reconciles: 40,
  reconciles_per_second: 400,
  reconcile_seconds_mean: 0.01,
  operator_writes_to_converge: 60,
  apiserver_ms_per_write: 4,
  idle_writes_per_minute: 0,
  cpu_seconds_to_converge: 0.1,
  rss_start_mb: 60,
  peak_rss_start_mb: 60,
  rss_mb: 60,
  peak_rss_mb: 62,
  rss_anonymous_mb: 18,
  rss_file_mb: 42,
  ...figures,
});

describe('bench:reconcile report', () => {
  it('divides the first implementation by the second, to two decimals', () => {
    const r = ratios(
      run('typescript', { objects_per_second: 100, rss_mb: 63 }),
      run('controller-runtime', { objects_per_second: 300, rss_mb: 45 }),
    );
    expect(r).toMatchObject({ ratio: 'typescript/controller-runtime', throughput: 0.33, rss: 1.4, cpu: 1 });
  });

  it('has no ratio, rather than Infinity, where the second figure is zero', () => {
    // At smoke size controller-runtime can converge within one 10 ms CPU tick.
    const r = ratios(
      run('typescript', { cpu_seconds_to_converge: 0.1 }),
      run('controller-runtime', { cpu_seconds_to_converge: 0 }),
    );
    expect(r.cpu).toBeNull();
    expect(JSON.stringify(r)).not.toContain('Infinity');
    expect(table([run('typescript', {}), run('controller-runtime', {})], r)).toMatch(
      /CPU seconds to converge.*n\/a/,
    );
  });

  it('summarises both orders: geometric mean of throughput, highest RSS, no CPU figure if a round has none', () => {
    const first = ratios(
      run('typescript', { objects_per_second: 100 }),
      run('controller-runtime', { objects_per_second: 400 }),
    );
    const second = ratios(
      run('typescript', { objects_per_second: 400, peak_rss_mb: 75, cpu_seconds_to_converge: 0.2 }),
      run('controller-runtime', { objects_per_second: 100, peak_rss_mb: 50, cpu_seconds_to_converge: 0 }),
    );
    expect(bothOrders([first, second])).toMatchObject({
      throughput: 1,
      throughput_min: 0.25,
      throughput_max: 4,
      peak_rss_max: 1.5,
      cpu: null,
    });
  });
});
