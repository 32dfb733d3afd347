// Builders and readers shared by the EtcdCluster controller tests.
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { builtin, findCondition, Manager, type Condition, type KubeClient } from '@homeostat/reconcile';
import { etcdClusters, type EtcdCluster, type EtcdClusterSpecFields } from '../api/etcd-cluster-types.ts';
import { operatorName } from '../controllers/cluster-names.ts';
import { addEtcdClusterController } from '../controllers/etcd-cluster-controller.ts';
import type { MemberAddressing } from '../controllers/member-addressing.ts';

/** Specs as a user writes them: only the fields they set (the API server defaults the rest). */
export type SpecInput = Partial<EtcdClusterSpecFields>;

/** Creates an EtcdCluster and returns it as stored (with uid and defaults). */
export function createEtcdCluster(
  client: KubeClient,
  name: string,
  namespace: string,
  spec: SpecInput,
): Promise<EtcdCluster> {
  return client.create(etcdClusters, { metadata: { name, namespace }, spec: spec as EtcdClusterSpecFields });
}

/** A namespace with the ServiceAccount pods need (no kube-controller-manager makes "default" here). */
export async function createTestNamespace(client: KubeClient, namespace: string): Promise<void> {
  await client.create(builtin.namespaces, { metadata: { name: namespace } });
  await client.create(builtin.serviceAccounts, { metadata: { name: 'default', namespace } });
}

/** The EtcdCluster operator alone, watching one namespace, with quick health polls for tests. */
export async function startTestOperator(
  kubeConfig: KubeConfig,
  namespace: string,
  addressing: MemberAddressing,
  logger: Logger,
  /** More controllers for the same manager (the backup controllers, say). */
  addMore: (manager: Manager) => void = () => undefined,
): Promise<Manager> {
  const manager = new Manager({
    kubeConfig,
    name: operatorName,
    namespaces: [namespace],
    logger,
    bindAddress: '127.0.0.1',
    shutdownTimeoutMs: 5000,
  });
  addEtcdClusterController(manager, {
    addressing,
    healthIntervalMs: 1000,
    stepIntervalMs: 300,
    etcdCallTimeoutMs: 2000,
  });
  addMore(manager);
  await manager.start();
  return manager;
}

/** Events about one object with one reason, oldest first. */
export async function eventsAbout(client: KubeClient, namespace: string, name: string, reason: string) {
  const list = await client.list(builtin.events, { namespace });
  // eventTime is an RFC 3339 MicroTime string as the API server sends it (never revived to a Date).
  const time = (e: { eventTime?: unknown }) => String(e.eventTime ?? '');
  return list.items
    .filter((e) => e.regarding?.name === name && e.reason === reason)
    .sort((a, b) => time(a).localeCompare(time(b)));
}

/** A condition of an EtcdCluster or an EtcdBackup. */
export function conditionOf(
  object: { status?: { conditions?: Condition[] } } | undefined,
  type: string,
): Condition | undefined {
  return findCondition(object?.status?.conditions, type);
}
