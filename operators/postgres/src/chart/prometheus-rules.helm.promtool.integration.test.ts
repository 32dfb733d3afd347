// The chart's PrometheusRule rendered by the real helm and checked and unit-tested by the real
// promtool; its alerts read only metrics the PostgreSQL operator, built as it runs, exports.
import { describePrometheusRules } from '@homeostat/operator-kit/testing';
import { operatorMetricsRegistry } from '../test-support/metrics-registry.ts';
import { postgresChart } from './postgres-chart.ts';

describePrometheusRules(postgresChart, {
  operator: 'PostgreSQL',
  registry: operatorMetricsRegistry,
});
