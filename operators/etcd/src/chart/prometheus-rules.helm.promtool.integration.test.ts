// The chart's PrometheusRule rendered by the real helm and checked and unit-tested by the real
// promtool; its alerts read only metrics the etcd operator, built as it runs, exports.
import { describePrometheusRules, unreachableCluster } from '@homeostat/operator-kit/testing';
import { etcdOperator } from '../operator.ts';
import { testOperatorConfig } from '../test-support/test-operator-config.ts';
import { etcdChart } from './etcd-chart.ts';

describePrometheusRules(etcdChart, {
  operator: 'etcd',
  registry: () => etcdOperator(unreachableCluster, testOperatorConfig({})).metrics.registry,
});
