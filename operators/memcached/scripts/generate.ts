// Writes the chart's generated files (CRD template, values.schema.json, values.yaml) and the OLM
// bundle and catalog package under olm/ from src/api and src/chart. Run after changing either:
// npm run generate -w operators/memcached
import { writeChartFiles } from '@homeostat/operator-kit/chart';
import { memcachedChart } from '../src/chart/memcached-chart.ts';

await writeChartFiles(memcachedChart);
