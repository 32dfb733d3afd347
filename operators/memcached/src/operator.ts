// Builds the Memcached operator (a Manager with its controller) from a configuration.
import type { ClusterSource, Manager } from '@homeostat/reconcile';
import { operatorManager, type ManagerExtras } from '@homeostat/operator-kit';
import type { OperatorConfig } from './config/operator-config.ts';
import { addMemcachedController } from './controllers/memcached-controller.ts';
import { operatorName } from './controllers/operand-labels.ts';
import { CacheGauges } from './metrics/cache-gauges.ts';

/** Builds (but does not start) the Memcached operator's manager. */
export function memcachedOperator(
  kubeConfig: ClusterSource,
  config: OperatorConfig,
  extras: ManagerExtras = {},
): Manager {
  const manager = operatorManager(kubeConfig, operatorName, config, extras);
  addMemcachedController(manager, {
    defaultImages: { memcached: config.memcachedImage, exporter: config.memcachedExporterImage },
    maxConcurrentReconciles: config.maxConcurrentReconciles,
    gauges: new CacheGauges(manager.metrics.registry),
  });
  return manager;
}
