// Lints and renders the chart with the real helm and validates every rendered object with
// kubeconform -strict against the real kube-apiserver's OpenAPI and the PostgreSQLCluster CRD's schema.
import { describeChartConventions } from '@homeostat/operator-kit/testing';
import { postgresChart } from './postgres-chart.ts';

describeChartConventions(postgresChart, {
  valueSets: [
    [
      'other PostgreSQL images and a faster probe',
      [
        '--set',
        'postgres17Image=registry.example/postgresql:17.6',
        '--set',
        'postgres18Image=registry.example/postgresql:18.1',
        '--set',
        'probeIntervalMs=500',
      ],
    ],
  ],
});
