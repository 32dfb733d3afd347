// @homeostat/operator-kit: what every operator's process shares (configuration and entry point).
// Chart generation: @homeostat/operator-kit/chart; the tests every chart passes: ./testing.
export {
  defineOperatorConfig,
  type CommonOperatorConfig,
  type ConfigReader,
  type OperatorConfig,
  type OperatorConfigDefinition,
  type Setting,
  type Settings,
} from './config/operator-config.ts';
export { ConfigError } from './config/config-error.ts';
export { list, logLevel, port, text, toggle, wholeNumber } from './config/setting-parsers.ts';
export { operatorManager, type ManagerExtras } from './run/operator-manager.ts';
export { runOperator, type OperatorEntryPoint } from './run/run-operator.ts';
export { topologySpreadConstraints } from './scheduling/topology-spread.ts';
export { restartAnnotations, restartedAtAnnotation, restartRequest } from './restart/restart-request.ts';
