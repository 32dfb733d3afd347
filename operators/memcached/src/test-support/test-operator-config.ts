import { testCommonConfig } from '@homeostat/operator-kit/testing';
import type { OperatorConfig } from '../config/operator-config.ts';

/** An operator configuration for tests: free ports, no leader election unless `overrides` asks. */
export function testOperatorConfig(overrides: Partial<OperatorConfig>): OperatorConfig {
  return {
    ...testCommonConfig(),
    memcachedImage: 'example.test/memcached:test',
    memcachedExporterImage: 'example.test/memcached-exporter:test',
    ...overrides,
  };
}
