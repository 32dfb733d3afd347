// Builds the etcd operator (a Manager with its controllers) from a configuration.
import type { ClusterSource, Manager } from '@homeostat/reconcile';
import { operatorManager, type ManagerExtras } from '@homeostat/operator-kit';
import type { OperatorConfig } from './config/operator-config.ts';
import { operatorName } from './controllers/cluster-names.ts';
import { addBackupDrillController } from './controllers/backup/backup-drill-controller.ts';
import { addBackupScheduleController } from './controllers/backup/backup-schedule-controller.ts';
import { addEtcdBackupController } from './controllers/backup/etcd-backup-controller.ts';
import { addEtcdClusterController } from './controllers/etcd-cluster-controller.ts';
import { dnsAddressing, type MemberAddressing } from './controllers/member-addressing.ts';
import { ClusterGauges } from './metrics/cluster-gauges.ts';
import { DrillMetrics } from './metrics/drill-metrics.ts';

/** Builds (but does not start) the etcd operator's manager. Tests may replace the addressing. */
export function etcdOperator(
  kubeConfig: ClusterSource,
  config: OperatorConfig,
  extras: ManagerExtras & { addressing?: MemberAddressing } = {},
): Manager {
  const { addressing, ...managerExtras } = extras;
  const manager = operatorManager(kubeConfig, operatorName, config, managerExtras);
  const memberAddressing = addressing ?? dnsAddressing(config.clusterDomain);
  addEtcdClusterController(manager, {
    addressing: memberAddressing,
    imageRepository: config.etcdImageRepository,
    operatorImage: config.operatorImage,
    maxConcurrentReconciles: config.maxConcurrentReconciles,
    gauges: new ClusterGauges(manager.metrics.registry),
  });
  addEtcdBackupController(manager, {
    addressing: memberAddressing,
    operatorImage: config.operatorImage,
    maxConcurrentReconciles: config.maxConcurrentReconciles,
  });
  addBackupScheduleController(manager, { operatorImage: config.operatorImage });
  addBackupDrillController(manager, {
    operatorImage: config.operatorImage,
    imageRepository: config.etcdImageRepository,
    metrics: new DrillMetrics(manager.metrics.registry),
  });
  return manager;
}
