// Installs the chart's CRD, ServiceAccount and RBAC (rendered by the real helm) into a real
// kube-apiserver, then runs the operator with that ServiceAccount's token: the least-privilege
// rules must be enough for everything it does, leader election included. The install is the one
// the guide recommends for a single tenant, namespace-scoped (`watchNamespaces`: a Role in the
// watched namespace, nothing cluster-wide), and its token must read no Secret anywhere else.
import type { KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '@homeostat/testing';
import { sharedKubeConfig } from '@homeostat/testing/shared';
import { installChartAccess } from '@homeostat/operator-kit/testing';
import { builtin, KubeClient, type Manager } from '@homeostat/reconcile';
import { memoryLogger } from '@homeostat/reconcile/testing';
import { postgresClusters, type PostgresCluster } from '../api/postgres-cluster-types.ts';
import { testOperator } from '../test-support/test-operator.ts';
import { postgresChart } from './postgres-chart.ts';

const admin = sharedKubeConfig();
const client = new KubeClient(admin, { fieldManager: 'test-admin' });
const operatorNamespace = `pg-operator-${process.pid}`;
const appNamespace = `pg-apps-${process.pid}`;
const release = 'rbac';

describe("the chart's RBAC on a real kube-apiserver + etcd", () => {
  const { log, lines } = memoryLogger();
  // A wait that fails says what the operator logged last (a refused request names its verb).
  const poll = {
    timeoutMs: 30_000,
    intervalMs: 100,
    describe: () =>
      lines
        .slice(-10)
        .map((l) => `${String(l['msg'])} ${JSON.stringify(l['err'] ?? '')}`)
        .join('\n'),
  };
  let manager: Manager | undefined;
  let leaseName = '';
  let operatorAccess: KubeConfig | undefined;

  beforeAll(async () => {
    // The watched namespace first: the chart's Role goes into it.
    await client.create(builtin.namespaces, { metadata: { name: appNamespace } });
    const access = await installChartAccess(postgresChart, admin, release, operatorNamespace, [
      '--set-json',
      `watchNamespaces=${JSON.stringify([appNamespace])}`,
    ]);
    operatorAccess = access.kubeConfig;
    leaseName = access.leaseName;
    // Pods need their ServiceAccount; without a kube-controller-manager nobody creates "default".
    await client.create(builtin.serviceAccounts, { metadata: { name: 'default', namespace: appNamespace } });
    manager = testOperator(
      access.kubeConfig,
      appNamespace,
      log,
      // No instance runs here: each is "reached" on a closed port, refused at once.
      { instanceEndpoint: (_cluster, instance) => ({ name: instance, host: '127.0.0.1', port: 1 }) },
      {
        // Only the test's namespace: the project's other suites share this API server, and a
        // cluster-wide operator met their namespaces being deleted (403 from the namespace's
        // lifecycle, not from RBAC), which is not what this test asks.
        watchNamespaces: [appNamespace],
        leaderElection: { namespace: operatorNamespace, leaseName },
        podName: 'operator-0',
      },
    );
    await manager.start();
  });

  afterAll(async () => {
    await manager?.stop();
    client.close();
  });

  it('is enough to elect a leader, make a cluster, scale it down, write its status and record Events', async () => {
    await waitUntil('leader elected', async () => manager?.isLeader ?? false, poll);
    expect((await client.get(builtin.leases, leaseName, operatorNamespace)).spec?.holderIdentity).toBe(
      'operator-0',
    );

    await client.create(postgresClusters, {
      metadata: { name: 'guarded', namespace: appNamespace },
      spec: { instances: 2, superuserAccess: true },
    } as unknown as PostgresCluster);
    const pods = () =>
      client.list(builtin.pods, {
        namespace: appNamespace,
        labelSelector: 'postgres.homeostat.dev/cluster=guarded',
      });
    await waitUntil(
      '2 pods, labelled',
      async () => {
        const items = (await pods()).items;
        return items.length === 2 && items.every((p) => p.metadata?.labels?.['postgres.homeostat.dev/role']);
      },
      poll,
    );
    await waitUntil(
      'status written',
      async () => (await client.get(postgresClusters, 'guarded', appNamespace)).status?.instances === 2,
      poll,
    );
    expect(await client.find(builtin.secrets, 'guarded-superuser', appNamespace)).toBeDefined();
    expect(await client.find(builtin.podDisruptionBudgets, 'guarded-primary', appNamespace)).toBeDefined();
    await client.patch(
      postgresClusters,
      'guarded',
      appNamespace,
      { spec: { instances: 1, superuserAccess: false } },
      { patchType: 'merge' },
    );
    await waitUntil('scaled down', async () => (await pods()).items.length === 1, poll);
    await waitUntil(
      'superuser Secret and budgets deleted',
      async () =>
        (await client.find(builtin.secrets, 'guarded-superuser', appNamespace)) === undefined &&
        (await client.find(builtin.podDisruptionBudgets, 'guarded-primary', appNamespace)) === undefined,
      poll,
    );
    const events = (await client.list(builtin.events, { namespace: appNamespace })).items;
    expect(events.some((e) => e.reason === 'InstancesRemoved')).toBe(true);
    const requests = manager?.metrics.registry.getSingleMetric('rest_client_requests_total');
    expect(JSON.stringify(await requests?.get())).not.toMatch(/"code":"403"/);
  });

  it('grants nothing outside the watched namespace: no Secret, pod or cluster elsewhere', async () => {
    if (!operatorAccess) throw new Error('the chart access was not installed');
    const asOperator = new KubeClient(operatorAccess, { fieldManager: 'operator' });
    try {
      const refused = async (list: () => Promise<unknown>) =>
        list().then(
          () => 'allowed',
          (error: unknown) => String((error as { code?: number }).code),
        );
      expect(await refused(() => asOperator.list(builtin.secrets, { namespace: appNamespace }))).toBe(
        'allowed',
      );
      for (const namespace of [operatorNamespace, 'default']) {
        expect(await refused(() => asOperator.list(builtin.secrets, { namespace }))).toBe('403');
        expect(await refused(() => asOperator.list(builtin.pods, { namespace }))).toBe('403');
        expect(await refused(() => asOperator.list(postgresClusters, { namespace }))).toBe('403');
      }
      expect(await refused(() => asOperator.list(builtin.secrets, {}))).toBe('403');
    } finally {
      asOperator.close();
    }
  });
});
