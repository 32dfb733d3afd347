// Installs the chart's CRD, ServiceAccount and RBAC (rendered by the real helm) into a real
// kube-apiserver, then runs the operator with that ServiceAccount's token: the least-privilege
// rules must be enough for everything it does, leader election included.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '@homeostat/testing';
import { sharedKubeConfig } from '@homeostat/testing/shared';
import { installChartAccess } from '@homeostat/operator-kit/testing';
import { builtin, KubeClient, type Manager } from '@homeostat/reconcile';
import { memoryLogger } from '@homeostat/reconcile/testing';
import { memcacheds } from '../api/memcached-types.ts';
import { memcachedOperator } from '../operator.ts';
import { createMemcached, eventsAbout } from '../test-support/memcached-fixtures.ts';
import { tlsSecretData } from '../test-support/pod-memcached.ts';
import { testOperatorConfig } from '../test-support/test-operator-config.ts';
import { memcachedChart } from './memcached-chart.ts';

const admin = sharedKubeConfig();
const client = new KubeClient(admin, { fieldManager: 'test-admin' });
const operatorNamespace = `mc-operator-${process.pid}`;
const appNamespace = `mc-apps-${process.pid}`;
const release = 'rbac';

describe("the chart's RBAC on a real kube-apiserver + etcd", () => {
  const { log } = memoryLogger();
  let manager: Manager | undefined;
  let leaseName = '';

  beforeAll(async () => {
    const access = await installChartAccess(memcachedChart, admin, release, operatorNamespace);
    leaseName = access.leaseName;
    await client.create(builtin.namespaces, { metadata: { name: appNamespace } });
    manager = memcachedOperator(
      access.kubeConfig,
      testOperatorConfig({
        leaderElection: { namespace: operatorNamespace, leaseName },
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

  it('is enough to elect a leader, converge a Memcached (one naming a TLS Secret too), write its status and record Events', async () => {
    await waitUntil('leader elected', async () => manager?.isLeader ?? false, { timeoutMs: 30_000 });
    const lease = await client.get(builtin.leases, leaseName, operatorNamespace);
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
    expect((await client.get(builtin.statefulSets, 'guarded', appNamespace)).spec?.replicas).toBe(2);
    expect(
      (await client.get(builtin.configMaps, 'guarded-servers', appNamespace)).data?.['servers'],
    ).toContain(`guarded-1.guarded.${appNamespace}.svc:11211`);
    await waitUntil(
      'Event recorded',
      async () => (await eventsAbout(client, appNamespace, 'guarded', 'StatefulSetCreated')).length > 0,
      { timeoutMs: 30_000 },
    );
    // spec.tls: the Secret is read (get only) before the pods are given it.
    await client.create(builtin.secrets, {
      metadata: { name: 'guarded-tls', namespace: appNamespace },
      type: 'kubernetes.io/tls',
      // A real certificate and key: the operator checks that memcached could load them.
      data: await tlsSecretData(mkdtempSync(join(tmpdir(), 'homeostat-memcached-tls-secret-'))),
    });
    await createMemcached(client, 'sealed', appNamespace, { tls: { secretName: 'guarded-tls' } });
    await waitUntil(
      'sealed converged with its Secret read',
      async () =>
        (await client.find(builtin.statefulSets, 'sealed', appNamespace))?.spec?.template.metadata
          ?.annotations?.['cache.homeostat.dev/secret-revision'] !== undefined,
      { timeoutMs: 30_000 },
    );
    const denied = manager?.metrics.registry.getSingleMetric('rest_client_requests_total');
    expect(JSON.stringify(await denied?.get())).not.toMatch(/"code":"403"/);
  });
});
