// The chart's Grafana dashboard: its JSON checked, its queries read only metrics the etcd
// operator, built as it runs, registers; its ConfigMap rendered by the real helm.
import { describeGrafanaDashboard, unreachableCluster } from '@homeostat/operator-kit/testing';
import { etcdOperator } from '../operator.ts';
import { testOperatorConfig } from '../test-support/test-operator-config.ts';
import { etcdChart } from './etcd-chart.ts';

describeGrafanaDashboard(etcdChart, {
  operator: () => etcdOperator(unreachableCluster, testOperatorConfig({})),
});
