// The chart's Grafana dashboard: its JSON checked, its queries read only metrics the PostgreSQL
// operator, built as it runs, registers; its ConfigMap rendered by the real helm.
import { describeGrafanaDashboard, unreachableCluster } from '@homeostat/operator-kit/testing';
import { postgresOperator } from '../operator.ts';
import { testOperatorConfig } from '../test-support/test-operator.ts';
import { postgresChart } from './postgres-chart.ts';

describeGrafanaDashboard(postgresChart, {
  operator: () => postgresOperator(unreachableCluster, testOperatorConfig()),
});
