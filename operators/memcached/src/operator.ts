// Builds the Memcached operator (a Manager with its controller) from a configuration.
import type { Logger } from 'pino';
import { Manager, type ClusterSource } from '@homeostat/reconcile';
import type { OperatorConfig } from './config/operator-config.ts';
import { addMemcachedController } from './controllers/memcached-controller.ts';
import { operatorName } from './controllers/operand-labels.ts';

/** Builds (but does not start) the Memcached operator's manager. */
export function memcachedOperator(
  kubeConfig: ClusterSource,
  config: OperatorConfig,
  extra: { logger?: Logger; bindAddress?: string } = {},
): Manager {
  const manager = new Manager({
    kubeConfig,
    name: operatorName,
    namespaces: config.watchNamespaces,
    healthPort: config.healthPort,
    metricsPort: config.metricsPort,
    ...(config.leaderElection
      ? {
          leaderElection: {
            namespace: config.leaderElection.namespace,
            leaseName: config.leaderElection.leaseName,
            ...(config.podName ? { identity: config.podName } : {}),
          },
        }
      : {}),
    ...(extra.logger ? { logger: extra.logger } : {}),
    ...(extra.bindAddress ? { bindAddress: extra.bindAddress } : {}),
  });
  addMemcachedController(manager, {
    defaultImage: config.memcachedImage,
    maxConcurrentReconciles: config.maxConcurrentReconciles,
  });
  return manager;
}
