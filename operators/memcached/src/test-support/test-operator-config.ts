import type { OperatorConfig } from '../config/operator-config.ts';

/** An operator configuration for tests: free ports, no leader election unless `overrides` asks. */
export function testOperatorConfig(overrides: Partial<OperatorConfig>): OperatorConfig {
  return {
    watchNamespaces: [],
    leaderElection: undefined,
    podName: undefined,
    healthPort: 0,
    metricsPort: 0,
    memcachedImage: 'example.test/memcached:test',
    maxConcurrentReconciles: 2,
    logLevel: 'debug',
    ...overrides,
  };
}
