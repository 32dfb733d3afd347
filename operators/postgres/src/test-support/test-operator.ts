// The PostgreSQL operator as the tests run it: the shared control plane, free ports, no leader
// election unless asked, test images, a short probe interval.
import type { Logger } from 'pino';
import type { ClusterSource, Manager } from '@homeostat/reconcile';
import { testCommonConfig } from '@homeostat/operator-kit/testing';
import type { OperatorConfig } from '../config/operator-config.ts';
import type { RestoreDrillControllerOptions } from '../controllers/backup/restore-drill-controller.ts';
import type { PostgresClusterControllerOptions } from '../controllers/postgres-cluster-controller.ts';
import type { BackupScheduleOptions } from '../controllers/backup/backup-schedule-controller.ts';
import { postgresOperator } from '../operator.ts';

/** An operator configuration for tests. */
export function testOperatorConfig(overrides: Partial<OperatorConfig> = {}): OperatorConfig {
  return {
    ...testCommonConfig(),
    postgres17Image: 'example.test/postgres:17',
    postgres18Image: 'example.test/postgres:18',
    probeIntervalMs: 300,
    ...overrides,
  };
}

/** The operator watching `namespace`; not started. `controller` overrides the controller's options. */
export function testOperator(
  kubeConfig: ClusterSource,
  namespace: string,
  logger: Logger,
  controller: Partial<PostgresClusterControllerOptions> = {},
  config: Partial<OperatorConfig> = {},
  drills: Partial<RestoreDrillControllerOptions> = {},
  schedule: Partial<BackupScheduleOptions> = {},
): Manager {
  return postgresOperator(
    kubeConfig,
    testOperatorConfig({ watchNamespaces: [namespace], ...config }),
    { logger, bindAddress: '127.0.0.1' },
    controller,
    drills,
    schedule,
  );
}
