// @homeostat/operator-kit/testing: the tests every operator chart and image passes, as functions an
// operator calls with its own chart (see docs/adding-an-operator.md).
export {
  buildChartDependencies,
  chartDependenciesGlobalSetup,
  helm,
  helmTemplate,
  renderedObjects,
  type RenderedObject,
} from './helm-chart.ts';
export {
  describeChartConventions,
  type ChartConventionsOptions,
  type ValueSet,
} from './chart-conventions-suite.ts';
export { describeGeneratedChartFiles } from './generated-files-suite.ts';
export { defaultOperatorImage, describeOperatorImage } from './operator-image-suite.ts';
export { installChartAccess, type ChartAccess } from './chart-access.ts';
export { schemaLocation, toStrictJsonSchema, writeKubeconformSchemas } from './kubeconform-schemas.ts';
export { testCommonConfig } from './test-operator-config.ts';
export { describePrometheusRules, type PrometheusRulesOptions } from './prometheus-rules-suite.ts';
export { exportedMetricNames, metricNamesInExposition, unreachableCluster } from './exported-metric-names.ts';
export { metricNamesIn } from './promql-metric-names.ts';
export { describeGrafanaDashboard, type GrafanaDashboardOptions } from './grafana-dashboard-suite.ts';
export {
  dashboardMetricNames,
  dashboardPanels,
  dashboardQueries,
  variablesIn,
  type DashboardJson,
  type DashboardPanel,
  type DashboardQuery,
} from './grafana-dashboard-queries.ts';
export {
  acceptedValidatorWarnings,
  describeOlmBundleValidation,
  describeOlmCatalogPackage,
  olmValidatePath,
  validateBundle,
} from './olm-bundle-suite.ts';
export { committedAlmExamples, describeOlmExamples } from './olm-examples-suite.ts';
export {
  describeOperandServiceMonitor,
  type OperandServiceMonitorOptions,
} from './operand-service-monitor-suite.ts';
