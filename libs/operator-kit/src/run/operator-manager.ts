// The Manager every operator runs, configured from the common settings.
import type { Logger } from 'pino';
import { Manager, type ClusterSource } from '@homeostat/reconcile';
import type { CommonOperatorConfig } from '../config/operator-config.ts';

/** What a process or a test adds to the configuration when it builds an operator. */
export interface ManagerExtras {
  /** Defaults to pino JSON on stdout. */
  logger?: Logger;
  /** Address of the probe and metrics servers; tests bind to 127.0.0.1. */
  bindAddress?: string;
}

/**
 * A Manager (not started) for the operator `name`: watched namespaces, probe and metrics ports,
 * and leader election with the pod name as identity. The operator adds its controllers to it.
 */
export function operatorManager(
  kubeConfig: ClusterSource,
  name: string,
  config: CommonOperatorConfig,
  extras: ManagerExtras = {},
): Manager {
  return new Manager({
    kubeConfig,
    name,
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
    ...(extras.logger ? { logger: extras.logger } : {}),
    ...(extras.bindAddress ? { bindAddress: extras.bindAddress } : {}),
  });
}
