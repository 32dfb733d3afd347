// A write the API server keeps refusing must not stop healing: a ResourceQuota allows no
// PodDisruptionBudget, the cluster's is deleted (so every reconcile asks to create it again), and
// a member's pod is then deleted. Real kube-apiserver, real etcd members (MemberPodRunner).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { V1ResourceQuota } from '@kubernetes/client-node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { installCrds, waitUntil } from '@homeostat/testing';
import { sharedKubeConfig } from '@homeostat/testing/shared';
import { builtin, KubeClient, resourceType, type Manager } from '@homeostat/reconcile';
import { memoryLogger } from '@homeostat/reconcile/testing';
import { etcdBackupCrd } from '../api/etcd-backup-crd.ts';
import { etcdClusterCrd } from '../api/etcd-cluster-crd.ts';
import { etcdClusters } from '../api/etcd-cluster-types.ts';
import {
  conditionOf,
  createEtcdCluster,
  createTestNamespace,
  eventsAbout,
  startTestOperator,
} from '../test-support/etcd-cluster-fixtures.ts';
import { loopbackAddressing } from '../test-support/loopback-addressing.ts';
import { MemberPodRunner } from '../test-support/member-pod-runner.ts';

const kubeConfig = sharedKubeConfig();
const namespace = `etcd-refused-${process.pid}`;
const client = new KubeClient(kubeConfig, { fieldManager: 'test-user' });
const poll = { timeoutMs: 90_000, intervalMs: 200 };
const get = () => client.get(etcdClusters, 'kv', namespace);
const resourceQuotas = resourceType<V1ResourceQuota>('v1', 'ResourceQuota', 'resourcequotas');
const budgets = 'count/poddisruptionbudgets.policy';

describe('EtcdCluster with a write refused for good: real kube-apiserver, real etcd members', () => {
  const { log, lines } = memoryLogger();
  let manager: Manager | undefined;
  let runner: MemberPodRunner;
  let workDir: string;

  beforeAll(async () => {
    await installCrds(kubeConfig, [etcdClusterCrd, etcdBackupCrd]);
    await createTestNamespace(client, namespace);
    workDir = await mkdtemp(join(tmpdir(), 'homeostat-etcd-refused-'));
    runner = new MemberPodRunner(client, namespace, workDir);
    runner.start();
    manager = await startTestOperator(kubeConfig, namespace, loopbackAddressing(), log);
  });

  afterEach(async (context) => {
    if (context.task.result?.state !== 'fail') return;
    const notable = lines.filter((l) => Number(l['level']) >= 40).slice(-20);
    console.warn(JSON.stringify({ operatorLog: notable, status: (await get()).status }, null, 1));
  });

  afterAll(async () => {
    await manager?.stop();
    await runner?.stop();
    await client.delete(builtin.namespaces, namespace).catch(() => undefined);
    client.close();
    await rm(workDir, { recursive: true, force: true });
  });

  it('brings a deleted member pod back while the PodDisruptionBudget is refused, and says so in status', async () => {
    await createEtcdCluster(client, 'kv', namespace, { size: 3 });
    await waitUntil(
      'kv: 3 ready voting members',
      async () => (await get()).status?.members?.filter((m) => m.role === 'Voter' && m.ready).length === 3,
      poll,
    );
    // No kube-controller-manager here: the test writes the usage the quota controller would.
    await client.create(resourceQuotas, {
      metadata: { name: 'no-budgets', namespace },
      spec: { hard: { [budgets]: '0' } },
    });
    await client.patchStatus(resourceQuotas, 'no-budgets', namespace, {
      hard: { [budgets]: '0' },
      used: { [budgets]: '0' },
    });
    await client.delete(builtin.podDisruptionBudgets, 'kv', namespace);
    const refusal = async () => {
      const degraded = conditionOf(await get(), 'Degraded');
      return degraded?.reason === 'ApplyFailed' ? degraded.message : undefined;
    };
    await waitUntil('the refusal in status', async () => (await refusal()) !== undefined, poll);
    expect(await refusal()).toMatch(/^applying PodDisruptionBudget kv: .*exceeded quota: no-budgets/);

    const uid = (await client.get(builtin.pods, 'kv-1', namespace)).metadata?.uid;
    await client.delete(builtin.pods, 'kv-1', namespace);
    await waitUntil(
      'kv-1 made again, ready, a voter again',
      async () => {
        const pod = await client.find(builtin.pods, 'kv-1', namespace);
        const member = (await get()).status?.members?.find((m) => m.name === 'kv-1');
        return pod?.metadata?.uid !== uid && member?.ready === true && member.role === 'Voter';
      },
      poll,
    );
    // Still refused, and still said: healing did not wait for it, nor hide it.
    expect(await refusal()).toMatch(/^applying PodDisruptionBudget kv: .*exceeded quota/);
    expect((await eventsAbout(client, namespace, 'kv', 'ApplyFailed')).length).toBeGreaterThan(0);
    expect(await client.find(builtin.podDisruptionBudgets, 'kv', namespace)).toBeUndefined();
  });
});
