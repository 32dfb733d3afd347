// @homeostat/operator-kit/chart: an operator chart's generated files, from its TypeScript sources.
export { chartPaths, crdKind, kindsInProse, repoRoot, type OperatorChart } from './operator-chart.ts';
export { chartFiles, writeChartFiles, type GeneratedFile } from './chart-files.ts';
export { crdTemplate } from './crd-template.ts';
export {
  closed,
  kubeObject,
  serviceMonitorValues,
  stringMap,
  valuesSchema,
  valuesSchemaJson,
} from './values-schema.ts';
export { defaultsOf, valuesYaml } from './values-yaml.ts';
export {
  clusterSelector,
  grafanaDashboard,
  grafanaDashboardJson,
  operatorRow,
  operatorSelector,
  type DashboardRow,
  type OperatorDashboard,
  type PanelKind,
  type PanelQuery,
  type PanelSpec,
} from './grafana-dashboard.ts';
