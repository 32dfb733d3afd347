// Builds the etcd operator (a Manager with its controllers) from a configuration.
import type { ClusterSource, Manager } from '@homeostat/reconcile';
import { operatorManager, type ManagerExtras } from '@homeostat/operator-kit';
import type { OperatorConfig } from './config/operator-config.ts';
import { operatorName } from './controllers/cluster-names.ts';
import { addEtcdClusterController } from './controllers/etcd-cluster-controller.ts';
import { dnsAddressing, type MemberAddressing } from './controllers/member-addressing.ts';
import { ClusterGauges } from './metrics/cluster-gauges.ts';

/** Builds (but does not start) the etcd operator's manager. Tests may replace the addressing. */
export function etcdOperator(
  kubeConfig: ClusterSource,
  config: OperatorConfig,
  extras: ManagerExtras & { addressing?: MemberAddressing } = {},
): Manager {
  const { addressing, ...managerExtras } = extras;
  const manager = operatorManager(kubeConfig, operatorName, config, managerExtras);
  addEtcdClusterController(manager, {
    addressing: addressing ?? dnsAddressing(config.clusterDomain),
    imageRepository: config.etcdImageRepository,
    maxConcurrentReconciles: config.maxConcurrentReconciles,
    gauges: new ClusterGauges(manager.metrics.registry),
  });
  return manager;
}
