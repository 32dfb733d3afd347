// Writes the chart's generated files (CRD templates, values.schema.json, values.yaml) and the OLM
// bundle and catalog package under olm/ from src/api and src/chart. Run after changing either:
// npm run generate -w operators/etcd
import { writeChartFiles } from '@homeostat/operator-kit/chart';
import { etcdChart } from '../src/chart/etcd-chart.ts';

await writeChartFiles(etcdChart);
