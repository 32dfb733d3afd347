// Builds the PostgreSQL operator (a Manager with its controller) from a configuration.
import type { ClusterSource, Manager } from '@homeostat/reconcile';
import { operatorManager, type ManagerExtras } from '@homeostat/operator-kit';
import type { OperatorConfig } from './config/operator-config.ts';
import {
  addPostgresClusterController,
  type PostgresClusterControllerOptions,
} from './controllers/postgres-cluster-controller.ts';
import { operatorName } from './controllers/operand-labels.ts';
import { addPostgresBackupController } from './controllers/backup/postgres-backup-controller.ts';
import {
  addRestoreDrillController,
  type RestoreDrillControllerOptions,
} from './controllers/backup/restore-drill-controller.ts';
import {
  addBackupScheduleController,
  type BackupScheduleOptions,
} from './controllers/backup/backup-schedule-controller.ts';

/**
 * Builds (but does not start) the PostgreSQL operator's manager. `controller`, `drills` and
 * `schedule` override options for tests (the schedule's clock).
 */
export function postgresOperator(
  kubeConfig: ClusterSource,
  config: OperatorConfig,
  extras: ManagerExtras = {},
  controller: Partial<PostgresClusterControllerOptions> = {},
  drills: Partial<RestoreDrillControllerOptions> = {},
  schedule: Partial<BackupScheduleOptions> = {},
): Manager {
  const manager = operatorManager(kubeConfig, operatorName, config, extras);
  const images = { 17: config.postgres17Image, 18: config.postgres18Image } as const;
  addPostgresClusterController(manager, {
    imageFor: (version) => images[version],
    maxConcurrentReconciles: config.maxConcurrentReconciles,
    probeIntervalMs: config.probeIntervalMs,
    ...controller,
  });
  addPostgresBackupController(manager, {
    imageFor: (version) => images[version],
    maxConcurrentReconciles: config.maxConcurrentReconciles,
  });
  addRestoreDrillController(manager, {
    imageFor: (version) => images[version],
    // The source is counted the way the cluster controller reaches the instances.
    ...(controller.instanceEndpoint ? { instanceEndpoint: controller.instanceEndpoint } : {}),
    ...(controller.connect ? { connect: controller.connect } : {}),
    ...drills,
  });
  addBackupScheduleController(manager, { imageFor: (version) => images[version], ...schedule });
  return manager;
}
