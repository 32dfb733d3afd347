// Every instance pod of a cluster deleted at once: the failover that follows finds no replica to
// promote (they wait for a primary that is gone), and must end by itself, bringing the old primary
// back with every committed row. A real kube-apiserver + etcd, real PostgreSQL processes as the
// pods (test-support/pod-processes.ts).
import { describe, expect, it } from 'vitest';
import { waitUntil } from '@homeostat/testing';
import { builtin } from '@homeostat/reconcile';
import { defaultConnectOptions, withConnection } from '../instance/instance.ts';
import { podClusterSuite, settled } from '../test-support/pod-cluster.ts';
import { ackedTable, loopbackTarget, startWriteLoad } from '../test-support/write-load.ts';
import { missingIds } from '../test-support/test-cluster.ts';

const instances = ['accounts-0', 'accounts-1', 'accounts-2'];

describe('every instance pod deleted: real kube-apiserver, real PostgreSQL processes as pods', () => {
  const { client, namespace, pods, get, events, slow } = podClusterSuite({
    namespace: `pg-all-deleted-${process.pid}`,
    cluster: 'accounts',
  });

  it('comes back Healthy by itself, the old primary taking writes again with every committed row', async () => {
    await waitUntil('accounts Healthy with 3 ready instances', async () => settled(await get()), slow);
    await sqlOn('accounts-0', ackedTable);
    const writer = startWriteLoad(loopbackTarget(pods.readWritePort, pods.bed.superuser, pods.ca));
    try {
      await waitUntil('writes flowing', async () => writer.acked.length > 100, slow);
    } finally {
      await writer.stop();
    }

    for (const pod of instances) await client.delete(builtin.pods, pod, namespace);

    // What the status says while the failover cannot elect (sampled, not waited for: the old code
    // never gets past this step, and the wait below is what fails on it).
    const seen: { step: string; deadline?: string; degraded?: string }[] = [];
    const sampler = setInterval(() => {
      void get()
        .then((c) => {
          const operation = c.status?.operation;
          if (!operation) return;
          seen.push({
            step: operation.step,
            ...(operation.deadline ? { deadline: operation.deadline } : {}),
            ...(c.status?.conditions?.find((x) => x.type === 'Degraded')?.message
              ? { degraded: c.status.conditions.find((x) => x.type === 'Degraded')?.message ?? '' }
              : {}),
          });
        })
        .catch(() => undefined);
    }, 200);
    try {
      await waitUntil(
        'a failover started',
        async () => (await get()).status?.operation?.kind === 'failover',
        slow,
      );
      await waitUntil('accounts Healthy again, by itself', async () => settled(await get()), slow);
    } finally {
      clearInterval(sampler);
    }

    const status = (await get()).status;
    expect(status).toMatchObject({ currentPrimary: 'accounts-0', timeline: 1, failovers: 0 });
    expect(missingIds(writer.acked, await ids('accounts-0'))).toEqual([]);
    expect(pods.readWriteTarget).toBe('accounts-0');
    // The wait was in the status: electing with its deadline, the refusal saying what comes next;
    // then the old primary brought back.
    // (The first status of the step may come before its first refusal: any sample of it will do.)
    const electing = seen.filter((s) => s.step === 'electing' && s.deadline !== undefined);
    expect(electing.map((s) => s.degraded)).toContainEqual(
      expect.stringMatching(/accounts-0 \(the old primary.*\) is brought back at .*Z/),
    );
    expect(seen.map((s) => s.step)).toContain('reinstating');
    expect((await events('Reinstating')).length).toBeGreaterThan(0);
    expect((await events('PrimaryReinstated'))[0]?.note).toMatch(
      /^accounts-0 is primary again \(timeline 1\)/,
    );
    expect(await events('Promoted')).toEqual([]);
    expect(pods.starts.filter((s) => s.pod === 'accounts-0').map((s) => s.role)).toEqual([
      'primary',
      'primary',
    ]);
  }, 300_000);

  const sqlOn = (instance: string, text: string) =>
    withConnection(pods.endpoint(instance), pods.bed.superuser, defaultConnectOptions, (c) => c.query(text));
  const ids = async (instance: string) =>
    (await sqlOn(instance, 'SELECT id FROM acked ORDER BY id')).rows.map((r) => Number(r['id']));
});
