// Lints and renders the chart with the real helm and validates every rendered object with
// kubeconform -strict against the real kube-apiserver's OpenAPI and the etcd CRDs' schemas.
import { describeChartConventions } from '@homeostat/operator-kit/testing';
import { etcdChart } from './etcd-chart.ts';

describeChartConventions(etcdChart, {
  valueSets: [
    ['a mirror of the etcd images', ['--set', 'etcdImageRepository=registry.example/etcd']],
    ['another cluster domain', ['--set', 'clusterDomain=corp.example']],
  ],
});
