// A rolling restart asked for with homeostat.dev/restartedAt (`kubectl homeostat restart`): every
// instance made again under the request, replicas first, then a switchover, then the old primary,
// under write load. Real kube-apiserver, real PostgreSQL processes as the pods
// (test-support/pod-processes.ts).
import { describe, expect, it } from 'vitest';
import { restartedAtAnnotation } from '@homeostat/operator-kit';
import { builtin } from '@homeostat/reconcile';
import { waitUntil } from '@homeostat/testing';
import { postgresClusters } from '../api/postgres-cluster-types.ts';
import { defaultConnectOptions, withConnection } from '../instance/instance.ts';
import { podClusterSuite, settled } from '../test-support/pod-cluster.ts';
import { missingIds } from '../test-support/test-cluster.ts';
import { ackedTable, loopbackTarget, startWriteLoad } from '../test-support/write-load.ts';

describe('a rolling restart on request: real kube-apiserver, real PostgreSQL processes as pods', () => {
  const { client, namespace, cluster, pods, get, events, slow } = podClusterSuite({
    namespace: `pg-restart-${process.pid}`,
    cluster: 'again',
  });
  const sql = (instance: string, text: string) =>
    withConnection(pods.endpoint(instance), pods.bed.superuser, defaultConnectOptions, (c) => c.query(text));
  const ids = async (instance: string) =>
    (await sql(instance, 'SELECT id FROM acked ORDER BY id')).rows.map((r) => Number(r['id']));
  const instancePods = async () =>
    (
      await client.list(builtin.pods, {
        namespace,
        labelSelector: `app.kubernetes.io/instance=${cluster},app.kubernetes.io/component=database`,
      })
    ).items;

  it('restarts every instance, the replicas first, then the old primary through a switchover, losing no acknowledged write', async () => {
    await waitUntil('again Healthy with 3 ready instances', async () => settled(await get()), slow);
    const old = (await get()).status?.currentPrimary ?? '';
    await sql(old, ackedTable);
    const uids = new Map((await instancePods()).map((p) => [p.metadata?.name, p.metadata?.uid]));
    expect(uids.size).toBe(3);
    const requestedAt = '2026-11-28T01:50:00.000Z';
    const writer = startWriteLoad(loopbackTarget(pods.readWritePort, pods.bed.superuser, pods.ca));
    try {
      await waitUntil('writes flowing', async () => writer.acked.length > 100, slow);
      // An annotation: the generation stays, so only the predicate on it wakes the controller.
      await client.patch(postgresClusters, cluster, namespace, {
        metadata: { annotations: { [restartedAtAnnotation]: requestedAt } },
      });
      await waitUntil(
        'every instance made again under the request, the cluster settled',
        async () => {
          const now = await instancePods();
          return (
            now.length === 3 &&
            now.every(
              (p) =>
                p.metadata?.annotations?.[restartedAtAnnotation] === requestedAt &&
                p.metadata.uid !== uids.get(p.metadata.name),
            ) &&
            settled(await get())
          );
        },
        slow,
      );
      const doneAt = Date.now();
      await waitUntil('writes after the restart', async () => writer.acked.some((a) => a.at > doneAt), slow);
    } finally {
      await writer.stop();
    }
    const status = (await get()).status;
    const primary = status?.currentPrimary ?? '';
    expect(primary).not.toBe(old);
    expect(status).toMatchObject({ switchovers: 1, failovers: 0 });
    expect(missingIds(writer.acked, await ids(primary))).toEqual([]);
    expect((await events('RestartRequested')).map((e) => e.note)).toEqual([
      `restarting every instance, replicas first, then a switchover and the old primary (${restartedAtAnnotation}=${requestedAt})`,
    ]);
    // The replicas restarted one by one, then the switchover; the old primary's pod went with it
    // (the switchover stops it; it comes back a replica, under the request: its uid changed above).
    const restarted = await events('InstanceRestarting');
    expect(restarted.map((e) => e.note?.split(' ')[1]).sort()).toEqual(
      [...uids.keys()].filter((n) => n !== old).sort(),
    );
    const switched = await events('SwitchoverCompleted');
    expect(switched).toHaveLength(1);
    expect(String(restarted.at(-1)?.eventTime) <= String(switched[0]?.eventTime)).toBe(true);
  });
});
