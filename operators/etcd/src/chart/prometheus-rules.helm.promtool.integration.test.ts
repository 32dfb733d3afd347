// The chart's PrometheusRule rendered by the real helm and checked and unit-tested by the real
// promtool; its alerts read only metrics the etcd operator, built as it runs, exports.
import { describePrometheusRules } from '@homeostat/operator-kit/testing';
import { operatorMetricsRegistry } from '../test-support/metrics-registry.ts';
import { etcdChart } from './etcd-chart.ts';

describePrometheusRules(etcdChart, {
  operator: 'etcd',
  registry: operatorMetricsRegistry,
});
