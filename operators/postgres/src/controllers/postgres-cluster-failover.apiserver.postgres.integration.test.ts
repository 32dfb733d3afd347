// Failover and switchover through the controller: a real kube-apiserver + etcd, and real
// PostgreSQL processes standing in for the pods (test-support/pod-processes.ts plays kubelet and
// kube-proxy). The operator sees the instances only through SQL and the API server, as in a cluster.
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { waitUntil } from '@homeostat/testing';
import { postgresClusters } from '../api/postgres-cluster-types.ts';
import { defaultConnectOptions, withConnection } from '../instance/instance.ts';
import { podClusterSuite, settled } from '../test-support/pod-cluster.ts';
import { ackedTable, loopbackTarget, startWriteLoad } from '../test-support/write-load.ts';
import { missingIds } from '../test-support/test-cluster.ts';

describe('failover through the PostgreSQLCluster controller: real kube-apiserver, real PostgreSQL processes as pods', () => {
  const { client, namespace, cluster, pods, get, events, slow, stopOperator, startOperator } =
    podClusterSuite({
      namespace: `pg-ha-${process.pid}`,
      cluster: 'ha',
      operator: {
        maxLagBytes: 1024n * 1024n,
        // A failover held in electing across an operator restart (below) must not end by bringing
        // the old primary back in the meantime.
        electionTimeoutMs: 120_000,
      },
    });
  const sql = (instance: string, text: string) =>
    withConnection(pods.endpoint(instance), pods.bed.superuser, defaultConnectOptions, (c) => c.query(text));
  const ids = async (instance: string) =>
    (
      await withConnection(pods.endpoint(instance), pods.bed.superuser, defaultConnectOptions, (c) =>
        c.query<{ id: string }>('SELECT id FROM acked ORDER BY id'),
      )
    ).rows.map((r) => Number(r.id));

  it('bootstraps: instance 0 is primary, the others stream from it, the cluster is Healthy', async () => {
    await waitUntil('ha Healthy with 3 ready instances', async () => settled(await get()), slow);
    const status = (await get()).status;
    expect(status).toMatchObject({
      currentPrimary: 'ha-0',
      targetPrimary: 'ha-0',
      timeline: 1,
      failovers: 0,
    });
    expect(status?.instanceStatuses?.map((i) => [i.name, i.role, i.ready])).toEqual([
      ['ha-0', 'primary', true],
      ['ha-1', 'replica', true],
      ['ha-2', 'replica', true],
    ]);
    expect(status?.conditions?.find((c) => c.type === 'Available')).toMatchObject({
      status: 'True',
      reason: 'PrimaryAvailable',
    });
    expect(pods.readWriteTarget).toBe('ha-0');
    await sql('ha-0', ackedTable);
  });

  it('fails over from a frozen primary under write load, fencing it first, losing no acknowledged write', async () => {
    const writer = startWriteLoad(loopbackTarget(pods.readWritePort, pods.bed.superuser, pods.ca));
    try {
      await waitUntil('writes flowing', async () => writer.acked.length > 100, slow);
      pods.instance('ha-0').freeze(); // alive, its socket open, answering nothing: a node gone quiet
      const frozenAt = Date.now();
      await waitUntil(
        'writes on a new primary',
        async () => writer.acked.filter((a) => a.at > frozenAt).length > 50,
        slow,
      );
    } finally {
      await writer.stop();
    }
    await waitUntil('ha settled again, ha-0 back as a replica', async () => settled(await get()), slow);
    const status = (await get()).status;
    const primary = status?.currentPrimary ?? '';
    expect(['ha-1', 'ha-2']).toContain(primary);
    expect(status).toMatchObject({ timeline: 2, failovers: 1, switchovers: 0 });
    expect(status?.instanceStatuses?.find((i) => i.name === 'ha-0')).toMatchObject({
      role: 'replica',
      ready: true,
      timeline: 2,
    });
    expect(missingIds(writer.acked, await ids(primary))).toEqual([]);
    // The old pod was deleted (fenced) before the promotion and came back as a replica.
    const [fenced] = await events('Fenced');
    const [promoted] = await events('Promoted');
    expect(fenced?.note).toBe('ha-0 is fenced');
    expect(String(fenced?.eventTime) <= String(promoted?.eventTime)).toBe(true);
    expect((await events('FailoverCompleted'))[0]?.note).toMatch(
      new RegExp(`^${primary} is primary \\(timeline 2\\), replacing ha-0`),
    );
    expect(pods.starts.filter((s) => s.pod === 'ha-0').map((s) => s.role)).toEqual(['primary', 'replica']);
    expect(pods.readWriteTarget).toBe(primary);
  });

  it('finishes, once, a failover the operator was stopped in the middle of', async () => {
    const old = (await get()).status?.currentPrimary ?? '';
    const replicas = ['ha-0', 'ha-1', 'ha-2'].filter((n) => n !== old);
    const silent = replicas[0] ?? '';
    await sql(old, 'INSERT INTO acked (id) VALUES (-1)');
    await sql(
      old,
      "INSERT INTO acked (id, pad) SELECT -g, repeat('x', 1000) FROM generate_series(2, 3000) g",
    );
    await sleep(1000); // a few probes see the primary's new position
    const promotedBefore = (await events('Promoted')).length;
    // Under required with ANY 1 of 2 standbys, both must answer before one of them is known to hold
    // every acknowledged commit: with one silent, the failover stops after fencing, with its state
    // in the status, while this operator is stopped.
    pods.instance(silent).freeze();
    pods.instance(old).freeze();
    await waitUntil(
      'the failover refused for want of enough answering standbys',
      async () =>
        (await get()).status?.operation?.step === 'electing' && (await events('FailoverRefused')).length > 0,
      slow,
    );
    await stopOperator();
    expect((await get()).status?.operation).toMatchObject({
      kind: 'failover',
      step: 'electing',
      fenced: [old],
    });
    expect((await events('FailoverRefused')).map((e) => e.note)).toContainEqual(
      expect.stringMatching(/^only 1 of 2 synchronous standbys answered/),
    );

    pods.instance(silent).thaw();
    await startOperator();
    await waitUntil('a new operator finishes the failover', async () => settled(await get()), slow);
    const status = (await get()).status;
    expect(replicas).toContain(status?.currentPrimary);
    expect(status).toMatchObject({ timeline: 3, failovers: 2 });
    expect((await events('Promoted')).length).toBe(promotedBefore + 1);
    expect(await ids(status?.currentPrimary ?? '')).toContain(-3000);
  });

  it('switches over to the instance named in spec.primary, losing no acknowledged write', async () => {
    const old = (await get()).status?.currentPrimary ?? '';
    const target = ['ha-0', 'ha-1', 'ha-2'].find((n) => n !== old) ?? '';
    const writer = startWriteLoad(loopbackTarget(pods.readWritePort, pods.bed.superuser, pods.ca), {
      firstId: 1_000_000,
    });
    try {
      await waitUntil('writes flowing', async () => writer.acked.length > 100, slow);
      await client.patch(
        postgresClusters,
        cluster,
        namespace,
        { spec: { primary: target } },
        { patchType: 'merge' },
      );
      await waitUntil(
        'the switchover done',
        async () => (await get()).status?.currentPrimary === target,
        slow,
      );
      const doneAt = Date.now();
      await waitUntil(
        'writes on the new primary',
        async () => writer.acked.filter((a) => a.at > doneAt).length > 50,
        slow,
      );
    } finally {
      await writer.stop();
    }
    await waitUntil('settled after the switchover', async () => settled(await get()), slow);
    // The timeline from the new primary's own answer. (CI once saw it still 3 when the cluster
    // read settled, not yet explained: waited for, with the reason in the failure if it never comes.)
    await waitUntil('the status on timeline 4', async () => (await get()).status?.timeline === 4, slow);
    expect((await get()).status).toMatchObject({ currentPrimary: target, switchovers: 1, timeline: 4 });
    expect(missingIds(writer.acked, await ids(target))).toEqual([]);
    expect((await events('SwitchoverCompleted'))[0]?.note).toMatch(
      new RegExp(`^${target} is primary \\(timeline 4\\), replacing ${old}`),
    );
  });
});
