// Lints and renders the chart with the real helm and validates every rendered object with
// kubeconform -strict against the real kube-apiserver's OpenAPI and the Memcached CRD's schema.
import { describeChartConventions } from '@homeostat/operator-kit/testing';
import { memcachedChart } from './memcached-chart.ts';

describeChartConventions(memcachedChart, {
  valueSets: [['another operand image', ['--set', 'memcachedImage=registry.example/memcached:1.6.40']]],
});
