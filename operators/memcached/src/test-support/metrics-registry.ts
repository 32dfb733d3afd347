// The Memcached operator's metrics registry as it runs (built, never started): the names its guide
// documents. The chart's alert tests check every alert against it, and the monitoring e2e suite
// finds each of them in a real Prometheus, so the list is never written down twice.
import { unreachableCluster } from '@homeostat/operator-kit/testing';
import type { Registry } from '@homeostat/reconcile';
import { memcachedOperator } from '../operator.ts';
import { testOperatorConfig } from './test-operator-config.ts';

/** The registry of the operator built with a test configuration against an unreachable API server. */
export const operatorMetricsRegistry = (): Registry =>
  memcachedOperator(unreachableCluster, testOperatorConfig({})).metrics.registry;
