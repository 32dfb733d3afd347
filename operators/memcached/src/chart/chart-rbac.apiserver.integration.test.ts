// Installs the chart's CRD, ServiceAccount and RBAC (rendered by the real helm) into a real
// kube-apiserver, then runs the operator with that ServiceAccount's token: the least-privilege
// rules must be enough for everything it does, leader election included.
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { KubeConfig } from '@kubernetes/client-node';
import { binaryPath, installCrds, kubernetesVersion, waitUntil } from '@homeostat/testing';
import { sharedKubeConfig } from '@homeostat/testing/shared';
import {
  builtin,
  KubeClient,
  objectPath,
  resourceType,
  type KubeObject,
  type Manager,
} from '@homeostat/reconcile';
import { memcacheds } from '../api/memcached-types.ts';
import { memcachedOperator } from '../operator.ts';
import { createMemcached, eventsAbout } from '../test-support/memcached-fixtures.ts';
import { memoryLogger } from '@homeostat/reconcile/testing';
import { testOperatorConfig } from '../test-support/test-operator-config.ts';
import { chartDir } from './chart-paths.ts';

const admin = sharedKubeConfig();
const client = new KubeClient(admin, { fieldManager: 'test-admin' });
const operatorNamespace = `mc-operator-${process.pid}`;
const appNamespace = `mc-apps-${process.pid}`;
const release = 'rbac';
const rbac = 'rbac.authorization.k8s.io/v1';
const kinds: Record<string, ReturnType<typeof resourceType>> = {
  ServiceAccount: builtin.serviceAccounts,
  ClusterRole: resourceType(rbac, 'ClusterRole', 'clusterroles', false),
  ClusterRoleBinding: resourceType(rbac, 'ClusterRoleBinding', 'clusterrolebindings', false),
  Role: resourceType(rbac, 'Role', 'roles'),
  RoleBinding: resourceType(rbac, 'RoleBinding', 'rolebindings'),
};

describe("the chart's RBAC on a real kube-apiserver + etcd", () => {
  const { log } = memoryLogger();
  let manager: Manager | undefined;

  beforeAll(async () => {
    const rendered = spawnSync(
      binaryPath('helm'),
      ['template', release, chartDir, '--namespace', operatorNamespace, '--kube-version', kubernetesVersion],
      { encoding: 'utf8' },
    );
    expect(rendered.stderr).toBe('');
    const docs = parseAllDocuments(rendered.stdout)
      .map((d) => d.toJS() as KubeObject | null)
      .filter((d): d is KubeObject => d !== null);
    // The chart's own CRD, not the in-memory one: it must install as rendered.
    await installCrds(admin, docs.filter((d) => d.kind === 'CustomResourceDefinition') as never);
    for (const name of [operatorNamespace, appNamespace]) {
      await client.create(builtin.namespaces, { metadata: { name } });
    }
    for (const doc of docs) {
      const type = kinds[doc.kind ?? ''];
      if (type) await client.apply(type, doc);
    }
    const serviceAccount = docs.find((d) => d.kind === 'ServiceAccount')?.metadata?.name ?? '';
    const tokenRequest = await client.transport.json<{ status: { token: string } }>({
      method: 'POST',
      path: objectPath(builtin.serviceAccounts, serviceAccount, operatorNamespace, 'token'),
      body: {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenRequest',
        spec: { expirationSeconds: 3600 },
      },
    });
    const cluster = admin.getCurrentCluster();
    if (!cluster) throw new Error('the shared kubeconfig has no cluster');
    const asOperator = new KubeConfig();
    asOperator.loadFromOptions({
      clusters: [cluster],
      users: [{ name: 'operator', token: tokenRequest.status.token }],
      contexts: [{ name: 'operator', cluster: cluster.name, user: 'operator' }],
      currentContext: 'operator',
    });
    manager = memcachedOperator(
      asOperator,
      testOperatorConfig({
        leaderElection: { namespace: operatorNamespace, leaseName: `${release}-memcached-operator` },
        podName: 'operator-0',
      }),
      { logger: log, bindAddress: '127.0.0.1' },
    );
    await manager.start();
  });

  afterAll(async () => {
    await manager?.stop();
    client.close();
  });

  it('is enough to elect a leader, converge a Memcached, write its status and record Events', async () => {
    await waitUntil('leader elected', async () => manager?.isLeader ?? false, { timeoutMs: 30_000 });
    const lease = await client.get(builtin.leases, `${release}-memcached-operator`, operatorNamespace);
    expect(lease.spec?.holderIdentity).toBe('operator-0');

    await createMemcached(client, 'guarded', appNamespace, { size: 2 });
    await waitUntil(
      'guarded converged',
      async () =>
        (await client.get(memcacheds, 'guarded', appNamespace)).status?.observedGeneration === 1 &&
        (await client.find(builtin.podDisruptionBudgets, 'guarded', appNamespace)) !== undefined,
      { timeoutMs: 30_000 },
    );
    const memcached = await client.get(memcacheds, 'guarded', appNamespace);
    expect(memcached.status?.conditions?.find((c) => c.type === 'Degraded')?.status).toBe('False');
    expect((await client.get(builtin.deployments, 'guarded', appNamespace)).spec?.replicas).toBe(2);
    await waitUntil(
      'Event recorded',
      async () => (await eventsAbout(client, appNamespace, 'guarded', 'DeploymentCreated')).length > 0,
      { timeoutMs: 30_000 },
    );
    const denied = manager?.metrics.registry.getSingleMetric('rest_client_requests_total');
    expect(JSON.stringify(await denied?.get())).not.toMatch(/"code":"403"/);
  });
});
