// Fencing on request (ADR 0223): the cluster's postgres.homeostat.dev/fencedInstances annotation,
// set and removed as `kubectl homeostat fence`/`unfence` do. Real kube-apiserver, real PostgreSQL
// processes as the pods (test-support/pod-processes.ts), whose fence follows the pod annotation the
// operator writes, as the downward API and the self-fence container make it in a pod.
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { builtin } from '@homeostat/reconcile';
import { waitUntil } from '@homeostat/testing';
import { fencedInstancesAnnotation } from '../api/fencing-request.ts';
import { postgresClusters } from '../api/postgres-cluster-types.ts';
import { defaultConnectOptions, withConnection } from '../instance/instance.ts';
import { podClusterSuite, requiredSpec, settled } from '../test-support/pod-cluster.ts';
import { annotationKeys, labelKeys } from './operand-labels.ts';

describe('fencing on request: real kube-apiserver, real PostgreSQL processes as pods', () => {
  const { client, namespace, cluster, pods, get, events, slow } = podClusterSuite({
    namespace: `pg-fence-${process.pid}`,
    cluster: 'held',
    // No delay at all: a turn that counted a fenced or just-unfenced primary as failing would
    // start a failover at once, rather than only when a second turn agreed.
    spec: { ...requiredSpec, failoverDelay: '0s' },
  });
  const sql = (instance: string, text: string) =>
    withConnection(pods.endpoint(instance), pods.bed.superuser, defaultConnectOptions, (c) => c.query(text));
  const pod = (instance: string) => client.get(builtin.pods, instance, namespace);
  const fence = (value: string | null) =>
    client.patch(postgresClusters, cluster, namespace, {
      metadata: { annotations: { [fencedInstancesAnnotation]: value } },
    });
  const condition = async (type: string) => (await get()).status?.conditions?.find((c) => c.type === type);
  const answers = async (instance: string) =>
    sql(instance, 'SELECT 1').then(
      () => true,
      () => false,
    );

  it('fences a replica: unrouted, its PostgreSQL stopped, its pod kept; unfenced, it has every row again', async () => {
    await waitUntil('held Healthy with 3 ready instances', async () => settled(await get()), slow);
    const primary = (await get()).status?.currentPrimary ?? '';
    const replica = ['held-0', 'held-1', 'held-2'].find((i) => i !== primary) ?? '';
    const uid = (await pod(replica)).metadata?.uid;
    await sql(primary, 'CREATE TABLE kept (id int)');

    await fence(JSON.stringify([replica]));
    await waitUntil(
      `${replica} fenced: annotated, unrouted, not answering, shown fenced`,
      async () => {
        const now = await pod(replica);
        const shown = (await get()).status?.instanceStatuses?.find((i) => i.name === replica);
        return (
          now.metadata?.annotations?.[annotationKeys.fenced] === 'true' &&
          now.metadata.labels?.[labelKeys.role] === undefined &&
          now.metadata.labels?.[labelKeys.routed] === undefined &&
          shown?.fenced === true &&
          !shown.ready &&
          !(await answers(replica))
        );
      },
      slow,
    );
    expect((await pod(replica)).metadata?.uid).toBe(uid);
    expect(await condition('Degraded')).toMatchObject({ status: 'True', reason: 'InstancesFenced' });
    await waitUntil(
      'the InstanceFenced Event',
      async () => (await events('InstanceFenced')).length > 0,
      slow,
    );
    expect((await events('InstanceFenced'))[0]?.note).toContain(`fenced ${replica} on request`);
    // Still fenced a while later: no restart, no replacement brings it back.
    await sleep(3000);
    expect(await answers(replica)).toBe(false);
    expect((await pod(replica)).metadata?.uid).toBe(uid);
    // The primary takes writes meanwhile (the other replica is its synchronous standby).
    await sql(primary, 'INSERT INTO kept SELECT generate_series(1, 500)');

    await fence(null);
    await waitUntil('held Healthy again with 3 ready instances', async () => settled(await get()), slow);
    const back = await pod(replica);
    expect(back.metadata?.uid).toBe(uid);
    expect(back.metadata?.annotations?.[annotationKeys.fenced]).toBeUndefined();
    expect(back.metadata?.labels?.[labelKeys.role]).toBe('replica');
    await waitUntil(
      `${replica} has the rows written while it was fenced`,
      async () =>
        (await sql(replica, 'SELECT count(*)::int AS n FROM kept').catch(() => undefined))?.rows[0]?.['n'] ===
        500,
      slow,
    );
    expect(await condition('Degraded')).toMatchObject({ status: 'False' });
  });

  it('fences the primary: writes stop and no failover happens; unfenced, the same primary takes writes again', async () => {
    await waitUntil('held Healthy with 3 ready instances', async () => settled(await get()), slow);
    const before = (await get()).status;
    const primary = before?.currentPrimary ?? '';

    await fence(JSON.stringify([primary]));
    await waitUntil(
      `the primary ${primary} fenced and stopped`,
      async () =>
        (await condition('Available'))?.reason === 'PrimaryFenced' &&
        (await pod(primary)).metadata?.annotations?.[annotationKeys.fenced] === 'true' &&
        !(await answers(primary)),
      slow,
    );
    // Under failoverDelay 0s a failover would have started by now.
    await sleep(6000);
    const held = (await get()).status;
    expect(held).toMatchObject({ currentPrimary: primary, failovers: before?.failovers ?? 0 });
    expect(held?.operation).toBeUndefined();
    // No failing clock runs while it is held, to fail it over the moment it is unfenced.
    expect(held?.failingSince).toBeUndefined();
    expect(held?.phase).toBe('Unavailable');
    for (const replica of ['held-0', 'held-1', 'held-2'].filter((i) => i !== primary)) {
      expect((await sql(replica, 'SELECT pg_is_in_recovery() AS r')).rows[0]).toEqual({ r: true });
    }

    await fence('[]');
    await waitUntil('held Healthy again with 3 ready instances', async () => settled(await get()), slow);
    const after = (await get()).status;
    expect(after).toMatchObject({ currentPrimary: primary, failovers: before?.failovers ?? 0 });
    await sql(primary, 'INSERT INTO kept VALUES (501)');
    expect((await pod(primary)).metadata?.annotations?.[annotationKeys.unfencedAt]).toBeDefined();
  });

  it('makes every deleted pod again while the primary is fenced, the primary fenced in its role, and fails nothing over', async () => {
    await waitUntil('held Healthy with 3 ready instances', async () => settled(await get()), slow);
    const before = (await get()).status;
    const primary = before?.currentPrimary ?? '';
    const instances = ['held-0', 'held-1', 'held-2'];
    const uids = new Map(
      await Promise.all(instances.map(async (i) => [i, (await pod(i)).metadata?.uid] as const)),
    );
    await sql(primary, 'CREATE TABLE through_deletion AS SELECT generate_series(1, 300) AS id');

    await fence(JSON.stringify([primary]));
    await waitUntil(
      `the primary ${primary} fenced and stopped`,
      async () =>
        (await pod(primary)).metadata?.annotations?.[annotationKeys.fenced] === 'true' &&
        !(await answers(primary)),
      slow,
    );
    // A blunt `kubectl delete pod --all` during the incident.
    for (const instance of instances) await client.delete(builtin.pods, instance, namespace);
    // The replicas' entrypoints wait for a primary to clone or stream from, as in a pod; the
    // primary's waits for its fence to be lifted.
    await waitUntil(
      'every pod made again, the primary fenced in its role and stopped',
      async () => {
        const made = await Promise.all(instances.map((i) => client.find(builtin.pods, i, namespace)));
        if (made.some((p) => !p || p.metadata?.uid === uids.get(p.metadata?.name ?? ''))) return false;
        return (
          (await pod(primary)).metadata?.annotations?.[annotationKeys.fenced] === 'true' &&
          pods.starts.filter((s) => s.pod === primary).at(-1)?.role === 'primary (fenced)' &&
          !(await answers(primary))
        );
      },
      slow,
    );
    // Under failoverDelay 0s a failover would have started by now.
    await sleep(6000);
    const held = (await get()).status;
    expect(held).toMatchObject({ currentPrimary: primary, failovers: before?.failovers ?? 0 });
    expect(held?.operation).toBeUndefined();

    await fence(null);
    await waitUntil('held Healthy again with 3 ready instances', async () => settled(await get()), slow);
    expect((await get()).status).toMatchObject({
      currentPrimary: primary,
      failovers: before?.failovers ?? 0,
    });
    await sql(primary, 'INSERT INTO through_deletion VALUES (301)');
    for (const replica of instances.filter((i) => i !== primary)) {
      await waitUntil(
        `${replica} streams the primary's rows again`,
        async () =>
          (await sql(replica, 'SELECT count(*)::int AS n FROM through_deletion').catch(() => undefined))
            ?.rows[0]?.['n'] === 301,
        slow,
      );
    }
  });

  it('says why it cannot read a request, and changes nothing', async () => {
    await waitUntil('held Healthy with 3 ready instances', async () => settled(await get()), slow);
    await fence('held-1');
    await waitUntil(
      'Degraded: FencingRequestInvalid',
      async () => (await condition('Degraded'))?.reason === 'FencingRequestInvalid',
      slow,
    );
    expect((await condition('Degraded'))?.message).toContain('must be a JSON array of instance names');
    await waitUntil(
      'the FencingRequestInvalid Event',
      async () => (await events('FencingRequestInvalid')).length > 0,
      slow,
    );
    for (const instance of ['held-0', 'held-1', 'held-2']) {
      expect((await pod(instance)).metadata?.annotations?.[annotationKeys.fenced]).toBeUndefined();
      expect(await answers(instance)).toBe(true);
    }
    await fence(null);
    await waitUntil('held Healthy again', async () => settled(await get()), slow);
  });
});
