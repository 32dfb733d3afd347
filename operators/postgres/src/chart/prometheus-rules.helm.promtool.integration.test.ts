// The chart's PrometheusRule rendered by the real helm and checked and unit-tested by the real
// promtool; its alerts read only metrics the PostgreSQL operator, built as it runs, exports.
import { describePrometheusRules, unreachableCluster } from '@homeostat/operator-kit/testing';
import { postgresOperator } from '../operator.ts';
import { testOperatorConfig } from '../test-support/test-operator.ts';
import { postgresChart } from './postgres-chart.ts';

describePrometheusRules(postgresChart, {
  operator: 'PostgreSQL',
  registry: () => postgresOperator(unreachableCluster, testOperatorConfig()).metrics.registry,
});
