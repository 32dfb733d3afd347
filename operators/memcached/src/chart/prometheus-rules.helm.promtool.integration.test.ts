// The chart's PrometheusRule rendered by the real helm and checked and unit-tested by the real
// promtool; its alerts read only metrics the Memcached operator, built as it runs, exports, or that
// the pods' metrics sidecar (the real binary, next to a real memcached) serves.
import { describePrometheusRules } from '@homeostat/operator-kit/testing';
import { operatorMetricsRegistry } from '../test-support/metrics-registry.ts';
import { sidecarMetricNames } from '../test-support/sidecar-metric-names.ts';
import { memcachedChart } from './memcached-chart.ts';

describePrometheusRules(memcachedChart, {
  operator: 'Memcached',
  registry: operatorMetricsRegistry,
  operandMetrics: sidecarMetricNames,
});
