// Fails when the chart's CRD templates, values.schema.json or values.yaml are stale.
import { describeGeneratedChartFiles } from '@homeostat/operator-kit/testing';
import { etcdChart } from './etcd-chart.ts';

describeGeneratedChartFiles(etcdChart);
