// Installs the chart's CRDs, ServiceAccount and RBAC (rendered by the real helm) into a real
// kube-apiserver, then runs the operator with that ServiceAccount's token: the least-privilege
// rules must be enough for everything it does here, leader election included.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '@homeostat/testing';
import { sharedKubeConfig } from '@homeostat/testing/shared';
import { installChartAccess } from '@homeostat/operator-kit/testing';
import { builtin, KubeClient, type Manager } from '@homeostat/reconcile';
import { memoryLogger } from '@homeostat/reconcile/testing';
import { etcdBackups } from '../api/etcd-backup-types.ts';
import { etcdClusters } from '../api/etcd-cluster-types.ts';
import { defaultVersion } from '../api/etcd-versions.ts';
import { etcdOperator } from '../operator.ts';
import {
  createEtcdCluster,
  createTestNamespace,
  eventsAbout,
} from '../test-support/etcd-cluster-fixtures.ts';
import { loopbackAddressing } from '../test-support/loopback-addressing.ts';
import { testOperatorConfig } from '../test-support/test-operator-config.ts';
import { etcdChart } from './etcd-chart.ts';

const admin = sharedKubeConfig();
const client = new KubeClient(admin, { fieldManager: 'test-admin' });
const operatorNamespace = `etcd-operator-${process.pid}`;
const appNamespace = `etcd-apps-${process.pid}`;
const release = 'rbac';

describe("the chart's RBAC on a real kube-apiserver + etcd", () => {
  const { log } = memoryLogger();
  let manager: Manager | undefined;
  let leaseName = '';
  let operatorKubeConfig: Awaited<ReturnType<typeof installChartAccess>>['kubeConfig'];

  beforeAll(async () => {
    const access = await installChartAccess(etcdChart, admin, release, operatorNamespace);
    leaseName = access.leaseName;
    operatorKubeConfig = access.kubeConfig;
    await createTestNamespace(client, appNamespace);
    manager = etcdOperator(
      access.kubeConfig,
      // Only its own namespace: other suites' clusters (in namespaces they delete) are not its business.
      testOperatorConfig({
        watchNamespaces: [appNamespace],
        leaderElection: { namespace: operatorNamespace, leaseName },
        podName: 'operator-0',
      }),
      { logger: log, bindAddress: '127.0.0.1', addressing: loopbackAddressing() },
    );
    await manager.start();
  });

  afterAll(async () => {
    await manager?.stop();
    client.close();
  });

  it('is enough to elect a leader, make certificates, Services, a claim and a pod, write status and Events, and record a backup', async () => {
    await waitUntil('leader elected', async () => manager?.isLeader ?? false, { timeoutMs: 30_000 });
    expect((await client.get(builtin.leases, leaseName, operatorNamespace)).spec?.holderIdentity).toBe(
      'operator-0',
    );

    await createEtcdCluster(client, 'guarded', appNamespace, { size: 3 });
    await waitUntil(
      'guarded: Secrets, Services, PDB, claim and pod made; status written',
      async () =>
        (await client.get(etcdClusters, 'guarded', appNamespace)).status?.phase === 'Creating' &&
        (await client.find(builtin.pods, 'guarded-0', appNamespace)) !== undefined &&
        (await client.find(builtin.podDisruptionBudgets, 'guarded', appNamespace)) !== undefined,
      { timeoutMs: 30_000 },
    );
    expect(await client.find(builtin.secrets, 'guarded-client-tls', appNamespace)).toBeDefined();
    expect(await client.find(builtin.persistentVolumeClaims, 'guarded-0-data', appNamespace)).toBeDefined();
    const image = `example.test/etcd:v${defaultVersion}`;
    expect((await client.get(builtin.pods, 'guarded-0', appNamespace)).spec?.containers[0]?.image).toBe(
      image,
    );
    // A rolling upgrade patches a member pod's image (rolling-upgrade.ts): the rules allow it.
    const asOperator = new KubeClient(operatorKubeConfig, { fieldManager: 'etcd-operator' });
    try {
      await asOperator.patch(
        builtin.pods,
        'guarded-0',
        appNamespace,
        { spec: { containers: [{ name: 'etcd', image }] } },
        { patchType: 'strategic' },
      );
    } finally {
      asOperator.close();
    }
    await waitUntil(
      'Event recorded',
      async () => (await eventsAbout(client, appNamespace, 'guarded', 'CertificatesCreated')).length > 0,
      { timeoutMs: 30_000 },
    );
    // A backup of a cluster with no ready member waits: its status is written, no write refused.
    await client.create(etcdBackups, {
      metadata: { name: 'guarded-now', namespace: appNamespace },
      spec: {
        clusterName: 'guarded',
        destination: { s3: { bucket: 'b-1', region: 'r', forcePathStyle: true, credentialsSecretName: 's' } },
      },
    });
    await waitUntil(
      'EtcdBackup status written',
      async () => (await client.get(etcdBackups, 'guarded-now', appNamespace)).status?.phase === 'Pending',
      { timeoutMs: 30_000 },
    );
    const requests = await manager?.metrics.registry.getSingleMetric('rest_client_requests_total')?.get();
    expect(requests?.values.filter((v) => v.labels['code'] === '403')).toEqual([]);
  });
});
