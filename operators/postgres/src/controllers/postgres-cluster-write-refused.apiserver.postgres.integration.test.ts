// A write the API server keeps refusing must not switch failover off: the claims' resize is refused
// (a real kube-apiserver refuses to resize a claim no volume is bound to, as a quota or an
// admission policy would), and the primary then goes quiet. Real PostgreSQL processes play the
// pods (test-support/pod-processes.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '@homeostat/testing';
import { sharedKubeConfig } from '@homeostat/testing/shared';
import { KubeClient, type Manager } from '@homeostat/reconcile';
import { memoryLogger } from '@homeostat/reconcile/testing';
import { postgresClusters } from '../api/postgres-cluster-types.ts';
import { PodProcesses } from '../test-support/pod-processes.ts';
import {
  clusterReader,
  createRequiredCluster,
  failOverWhileRefused,
  podOperator,
  prepareNamespace,
  settled,
} from '../test-support/pod-cluster.ts';

const kubeConfig = sharedKubeConfig();
const namespace = `pg-write-refused-${process.pid}`;
const cluster = 'ledger';
const client = new KubeClient(kubeConfig, { fieldManager: 'test-user' });
const { log, lines } = memoryLogger();
const reader = clusterReader(client, namespace, cluster, lines);
const { get, events, slow } = reader;

describe('a write refused for good: real kube-apiserver, real PostgreSQL processes as pods', () => {
  const pods = new PodProcesses(client, namespace, cluster);
  let manager: Manager;

  beforeAll(async () => {
    await prepareNamespace(kubeConfig, client, namespace);
    manager = podOperator(kubeConfig, namespace, log, pods);
    await manager.start();
    await createRequiredCluster(client, namespace, cluster);
    await pods.start();
  });

  afterAll(async () => {
    await manager?.stop();
    await pods.stop();
    client.close();
  });

  it('fails over from a quiet primary while the claim resize is refused, and says so in status', async () => {
    await waitUntil('ledger Healthy with 3 ready instances', async () => settled(await get()), slow);
    const old = (await get()).status?.currentPrimary ?? '';
    await client.patch(
      postgresClusters,
      cluster,
      namespace,
      { spec: { storage: { size: '2Gi' } } },
      { patchType: 'merge' },
    );
    const refused = (c: Awaited<ReturnType<typeof get>>) =>
      c.status?.conditions?.find((x) => x.type === 'Degraded' && x.reason === 'ApplyFailed')?.message;
    await waitUntil('the resize refused, in status', async () => refused(await get()) !== undefined, slow);
    expect(refused(await get())).toMatch(/PersistentVolumeClaim ledger-\d.*(immutable|forbidden)/i);
    const completed = await failOverWhileRefused(pods, reader, old);
    expect(completed?.note).toMatch(new RegExp(`replacing ${old}`));
    // The old primary is healed back as a replica; the refusal is still in status all along.
    await waitUntil(
      `${old} back as a ready replica`,
      async () =>
        (await get()).status?.instanceStatuses?.some(
          (i) => i.name === old && i.role === 'replica' && i.ready,
        ) === true,
      slow,
    );
    const status = (await get()).status;
    expect(status?.phase).toBe('Degraded');
    expect(refused(await get())).toMatch(/PersistentVolumeClaim ledger-\d/);
    // The refusal has its Warning Event.
    expect((await events('ApplyFailed')).length).toBeGreaterThan(0);
  }, 300_000);
});
