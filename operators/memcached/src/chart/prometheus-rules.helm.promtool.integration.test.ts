// The chart's PrometheusRule rendered by the real helm and checked and unit-tested by the real
// promtool; its alerts read only metrics the Memcached operator, built as it runs, exports, or that
// the pods' metrics sidecar (the real binary, next to a real memcached) serves.
import { describePrometheusRules, unreachableCluster } from '@homeostat/operator-kit/testing';
import { memcachedOperator } from '../operator.ts';
import { sidecarMetricNames } from '../test-support/sidecar-metric-names.ts';
import { testOperatorConfig } from '../test-support/test-operator-config.ts';
import { memcachedChart } from './memcached-chart.ts';

describePrometheusRules(memcachedChart, {
  operator: 'Memcached',
  registry: () => memcachedOperator(unreachableCluster, testOperatorConfig({})).metrics.registry,
  operandMetrics: sidecarMetricNames,
});
