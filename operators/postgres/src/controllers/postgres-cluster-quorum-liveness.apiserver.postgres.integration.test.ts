// A failover under `required` must not wait for ever on a standby that cannot have acknowledged
// anything. Found by the chaos benchmark on kind: a failover, then the new primary's node stops
// while the former primary is still rejoining (it waits for a primary before it starts, so it never
// streamed from the new one). Every commit the new primary acknowledged is then on the standby
// that answers, yet the operator refused to promote it ("only 1 of 2 synchronous standbys
// answered"), brought back the stopped primary and waited until its node returned.
// A real kube-apiserver + etcd, real PostgreSQL processes as pods (test-support/pod-processes.ts);
// a node stop is the test kubelet killing the pod's postgres and never starting a pod of that name.
import { describe, expect, it } from 'vitest';
import { waitUntil } from '@homeostat/testing';
import { defaultConnectOptions, withConnection } from '../instance/instance.ts';
import { podClusterSuite, settled } from '../test-support/pod-cluster.ts';
import { ackedTable, loopbackTarget, startWriteLoad } from '../test-support/write-load.ts';
import { missingIds } from '../test-support/test-cluster.ts';

describe('a failover under required, when the only other standby never streamed from the lost primary', () => {
  const { pods, get, slow } = podClusterSuite({
    namespace: `pg-quorum-${process.pid}`,
    cluster: 'lv',
    operator: { maxLagBytes: 1024n * 1024n },
  });
  const ids = async (instance: string) =>
    (
      await withConnection(pods.endpoint(instance), pods.bed.superuser, defaultConnectOptions, (c) =>
        c.query<{ id: string }>('SELECT id FROM acked ORDER BY id'),
      )
    ).rows.map((r) => Number(r.id));

  it('promotes the standby that holds every acknowledged commit, without waiting for the lost node', async () => {
    await waitUntil('lv Healthy', async () => settled(await get()), slow);
    const first = (await get()).status?.currentPrimary ?? '';
    await withConnection(pods.endpoint(first), pods.bed.superuser, defaultConnectOptions, (c) =>
      c.query(ackedTable),
    );
    const writer = startWriteLoad(loopbackTarget(pods.readWritePort, pods.bed.superuser, pods.ca));
    try {
      await waitUntil('writes flowing', async () => writer.acked.length > 50, slow);
      // The first primary's node stops: a failover, and that instance does not come back.
      pods.stopNode(first);
      await waitUntil(
        'a new primary',
        async () => ![undefined, first].includes((await get()).status?.currentPrimary),
        slow,
      );
      const second = (await get()).status?.currentPrimary ?? '';
      const secondAt = Date.now();
      await waitUntil(
        'writes on the second primary',
        async () => writer.acked.some((a) => a.at > secondAt),
        slow,
      );
      // Its node stops too, while the first one is still away (it never streamed from it).
      pods.stopNode(second);
      const third = ['lv-0', 'lv-1', 'lv-2'].find((n) => n !== first && n !== second) ?? '';
      const thirdAt = Date.now();
      await waitUntil(
        `${third} promoted although ${first} never answers`,
        async () =>
          writer.acked.some((a) => a.at > thirdAt) && (await get()).status?.currentPrimary === third,
        { ...slow, timeoutMs: 150_000 },
      );
      await writer.stop();
      expect(missingIds(writer.acked, await ids(third))).toEqual([]);
    } finally {
      await writer.stop();
    }
  }, 300_000);
});
