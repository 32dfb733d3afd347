// Fails when the chart's CRD template, values.schema.json or values.yaml is stale.
import { describeGeneratedChartFiles } from '@homeostat/operator-kit/testing';
import { memcachedChart } from './memcached-chart.ts';

describeGeneratedChartFiles(memcachedChart);
