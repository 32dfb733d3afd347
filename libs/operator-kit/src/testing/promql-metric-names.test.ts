import { describe, expect, it } from 'vitest';
import { metricNamesIn } from './promql-metric-names.ts';

describe('metricNamesIn', () => {
  it('finds the selected metrics and skips functions, labels, ranges, grouping and numbers', () => {
    expect(
      metricNamesIn(
        'sum by (job, namespace) (increase(controller_runtime_reconcile_errors_total{job="a-b-metrics", controller=~"x|y"}[20m])) > 0',
      ),
    ).toEqual(['controller_runtime_reconcile_errors_total']);
    expect(metricNamesIn('absent(up{job="j", namespace="ops"} == 1)')).toEqual(['up']);
    expect(
      metricNamesIn(
        'homeostat_postgres_instances_ready{job="j"} < on (cluster) group_left homeostat_postgres_instances',
      ),
    ).toEqual(['homeostat_postgres_instances_ready', 'homeostat_postgres_instances']);
    expect(metricNamesIn('time() - last_seen offset 5m > 1e9 and bool nan_count > Inf')).toEqual([
      'last_seen',
      'nan_count',
    ]);
  });

  it('refuses a selector by __name__, whose metric it could not see', () => {
    expect(() => metricNamesIn('{__name__="up"}')).toThrow(/__name__/);
  });
});
