// The chart's Grafana dashboard: its JSON checked, its queries read only metrics the Memcached
// operator, built as it runs, registers, or the pods' metrics sidecar (the real binary, next to a
// real memcached) serves; its ConfigMap rendered by the real helm.
import { describeGrafanaDashboard, unreachableCluster } from '@homeostat/operator-kit/testing';
import { memcachedOperator } from '../operator.ts';
import { sidecarMetricNames } from '../test-support/sidecar-metric-names.ts';
import { testOperatorConfig } from '../test-support/test-operator-config.ts';
import { memcachedChart } from './memcached-chart.ts';

describeGrafanaDashboard(memcachedChart, {
  operator: () => memcachedOperator(unreachableCluster, testOperatorConfig({})),
  operandMetrics: sidecarMetricNames,
});
