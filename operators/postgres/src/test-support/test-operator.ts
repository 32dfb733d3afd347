// The PostgreSQLCluster controller in a manager of its own, for tests against the shared control
// plane (main.ts and the configuration come with the shared operator wiring).
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { Manager } from '@homeostat/reconcile';
import {
  addPostgresClusterController,
  type PostgresClusterControllerOptions,
} from '../controllers/postgres-cluster-controller.ts';
import { operatorName } from '../controllers/operand-labels.ts';

export const testImages = { 17: 'example.test/postgres:17', 18: 'example.test/postgres:18' } as const;

/** A manager watching `namespace` with the controller; not started. */
export function testOperator(
  kubeConfig: KubeConfig,
  namespace: string,
  logger: Logger,
  options: Partial<PostgresClusterControllerOptions> = {},
): Manager {
  const manager = new Manager({
    kubeConfig,
    name: operatorName,
    namespaces: [namespace],
    logger,
    shutdownTimeoutMs: 10_000,
  });
  addPostgresClusterController(manager, {
    imageFor: (version) => testImages[version],
    probeIntervalMs: 300,
    ...options,
  });
  return manager;
}
