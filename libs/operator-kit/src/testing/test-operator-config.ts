import type { CommonOperatorConfig } from '../config/operator-config.ts';

/** The common settings for an operator under test: all namespaces, free ports, no leader election. */
export function testCommonConfig(overrides: Partial<CommonOperatorConfig> = {}): CommonOperatorConfig {
  return {
    watchNamespaces: [],
    leaderElection: undefined,
    podName: undefined,
    healthPort: 0,
    metricsPort: 0,
    maxConcurrentReconciles: 2,
    logLevel: 'debug',
    ...overrides,
  };
}
