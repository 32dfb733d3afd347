// A write the API server keeps refusing must not switch failover off: the claims' resize is refused
// (a real kube-apiserver refuses to resize a claim no volume is bound to, as a quota or an
// admission policy would), and the primary then goes quiet. Real PostgreSQL processes play the
// pods (test-support/pod-processes.ts).
import { describe, expect, it } from 'vitest';
import { waitUntil } from '@homeostat/testing';
import { postgresClusters } from '../api/postgres-cluster-types.ts';
import { failOverWhileRefused, podClusterSuite, settled } from '../test-support/pod-cluster.ts';

describe('a write refused for good: real kube-apiserver, real PostgreSQL processes as pods', () => {
  const suite = podClusterSuite({ namespace: `pg-write-refused-${process.pid}`, cluster: 'ledger' });
  const { client, namespace, cluster, pods, get, events, slow } = suite;

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
    const completed = await failOverWhileRefused(pods, suite, old);
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
