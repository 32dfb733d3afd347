// The PostgreSQLCluster controller against a real kube-apiserver + etcd. There is no kubelet, so no
// instance runs: these tests check what the operator writes (objects, Secrets, routing labels,
// status, conditions, Events) and what it refuses. Failover through the controller, with real
// PostgreSQL processes standing in for the pods, is proven in postgres-cluster-failover.*.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consistently, waitUntil } from '@homeostat/testing';
import { sharedKubeConfig } from '@homeostat/testing/shared';
import { builtin, findCondition, KubeClient, type Manager } from '@homeostat/reconcile';
import { memoryLogger } from '@homeostat/reconcile/testing';
import { postgresClusters, type PostgresCluster } from '../api/postgres-cluster-types.ts';
import type { PartialSpec } from '../test-support/cluster-fixtures.ts';
import { prepareNamespace } from '../test-support/pod-cluster.ts';
import { tlsSecretNames } from './cluster-names.ts';
import { testOperator } from '../test-support/test-operator.ts';

const kubeConfig = sharedKubeConfig();
const namespace = `pg-ctl-${process.pid}`;
const client = new KubeClient(kubeConfig, { fieldManager: 'test-user' });
const poll = { timeoutMs: 30_000, intervalMs: 100 };

const get = (name: string) => client.get(postgresClusters, name, namespace);
const condition = (c: PostgresCluster, type: string) => findCondition(c.status?.conditions, type);
const create = (name: string, spec: PartialSpec = {}) =>
  // A spec as a user writes it: the API server fills in the defaults.
  client.create(postgresClusters, { metadata: { name, namespace }, spec } as unknown as PostgresCluster);
const names = (items: { metadata?: { name?: string } }[]) => items.map((i) => i.metadata?.name).sort();
const listOf = async <T extends { metadata?: { name?: string } }>(
  type: Parameters<typeof client.list<T & { apiVersion?: string; kind?: string }>>[0],
  cluster: string,
) =>
  (await client.list(type, { namespace, labelSelector: `postgres.homeostat.dev/cluster=${cluster}` })).items;
const secretData = async (name: string) => {
  const secret = await client.get(builtin.secrets, name, namespace);
  return Object.fromEntries(
    Object.entries(secret.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()]),
  );
};
const eventsAbout = async (name: string, reason: string) =>
  (await client.list(builtin.events, { namespace })).items.filter(
    (e) => e.regarding?.name === name && e.reason === reason,
  );

describe('PostgreSQLCluster controller on a real kube-apiserver + etcd', () => {
  const { log, lines } = memoryLogger();
  let manager: Manager;

  beforeAll(async () => {
    await prepareNamespace(kubeConfig, client, namespace);
    // Instances are "reached" on a closed loopback port: refused at once, as a pod not yet running.
    manager = testOperator(kubeConfig, namespace, log, {
      instanceEndpoint: (_cluster, instance) => ({ name: instance, host: '127.0.0.1', port: 1 }),
    });
    await manager.start();
  });

  afterAll(async () => {
    await manager?.stop();
    client.close();
  });

  it('makes the Secrets, Services, budgets, claims and pods of a new cluster, all owned by it', async () => {
    const created = await create('alpha', {
      instances: 3,
      bootstrap: { database: 'shop', owner: 'shopper' },
    });
    await waitUntil('alpha: 3 pods', async () => (await listOf(builtin.pods, 'alpha')).length === 3, poll);
    const owner = {
      apiVersion: 'postgres.homeostat.dev/v1alpha1',
      kind: 'PostgreSQLCluster',
      name: 'alpha',
      uid: created.metadata?.uid,
      controller: true,
      blockOwnerDeletion: true,
    };
    const secrets = await listOf(builtin.secrets, 'alpha');
    expect(names(secrets)).toEqual([
      'alpha-app',
      'alpha-ca',
      'alpha-operator',
      'alpha-replication',
      'alpha-server',
    ]);
    const services = await listOf(builtin.services, 'alpha');
    expect(names(services)).toEqual(['alpha-instances', 'alpha-r', 'alpha-ro', 'alpha-rw']);
    expect(names(await listOf(builtin.podDisruptionBudgets, 'alpha'))).toEqual([
      'alpha-primary',
      'alpha-replicas',
    ]);
    expect(names(await listOf(builtin.persistentVolumeClaims, 'alpha'))).toEqual([
      'alpha-0',
      'alpha-1',
      'alpha-2',
    ]);
    const pods = await listOf(builtin.pods, 'alpha');
    for (const object of [
      ...secrets,
      ...services,
      ...pods,
      ...(await listOf(builtin.persistentVolumeClaims, 'alpha')),
    ]) {
      expect(object.metadata?.ownerReferences).toEqual([owner]);
    }

    // alpha-0 starts as the primary; the routing label says so once the routing manager wrote it.
    await waitUntil(
      'routing labels',
      async () =>
        (await listOf(builtin.pods, 'alpha')).every(
          (p) => p.metadata?.labels?.['postgres.homeostat.dev/role'],
        ),
      poll,
    );
    const roles = Object.fromEntries(
      (await listOf(builtin.pods, 'alpha')).map((p) => [
        p.metadata?.name,
        [
          p.metadata?.annotations?.['postgres.homeostat.dev/instance-role'],
          p.metadata?.labels?.['postgres.homeostat.dev/role'],
          p.metadata?.labels?.['postgres.homeostat.dev/routed'],
        ],
      ]),
    );
    expect(roles).toEqual({
      'alpha-0': ['primary', 'primary', 'true'],
      'alpha-1': ['replica', 'replica', 'true'],
      'alpha-2': ['replica', 'replica', 'true'],
    });
    const labelOwner = (await client.get(builtin.pods, 'alpha-1', namespace)).metadata?.managedFields?.find(
      (f) => JSON.stringify(f.fieldsV1).includes('postgres.homeostat.dev/role'),
    );
    expect(labelOwner?.manager).toBe('postgres-operator-routing');
    expect(JSON.stringify(labelOwner?.fieldsV1)).toContain('postgres.homeostat.dev/routed');

    // A pod labelled by an operator from before the -r Service selected `routed` gets it too.
    const routing = new KubeClient(kubeConfig, { fieldManager: 'postgres-operator-routing' });
    await routing.apply(builtin.pods, {
      metadata: { name: 'alpha-1', namespace, labels: { 'postgres.homeostat.dev/role': 'replica' } },
    });
    routing.close();
    await waitUntil(
      'alpha-1 routed again',
      async () =>
        (await client.get(builtin.pods, 'alpha-1', namespace)).metadata?.labels?.[
          'postgres.homeostat.dev/routed'
        ] === 'true',
      poll,
    );
  });

  it('routes a labelled pod through -r during an operation after an upgrade, never a fenced one', async () => {
    await create('upgrade', { instances: 3 });
    const labels = async (pod: string) => (await client.get(builtin.pods, pod, namespace)).metadata?.labels;
    await waitUntil(
      'upgrade: 3 routed pods',
      async () => {
        const pods = await listOf(builtin.pods, 'upgrade');
        return (
          pods.length === 3 &&
          pods.every((p) => p.metadata?.labels?.['postgres.homeostat.dev/routed'] === 'true')
        );
      },
      poll,
    );
    // A failover stuck waiting for upgrade-0 to come back (it never does: nothing answers here),
    // with upgrade-2 fenced.
    const now = new Date().toISOString();
    await client.patchStatus(postgresClusters, 'upgrade', namespace, {
      currentPrimary: 'upgrade-0',
      targetPrimary: 'upgrade-0',
      operation: {
        kind: 'failover',
        step: 'reinstating',
        reason: 'test: stuck',
        startedAt: now,
        stepStartedAt: now,
        deadline: new Date(Date.now() + 3_600_000).toISOString(),
        fenced: ['upgrade-2'],
      },
    });
    await waitUntil(
      'the operation in the status',
      async () => (await get('upgrade')).status?.operation?.step === 'reinstating',
      poll,
    );
    // The pods as an operator from before the -r Service selected `routed` left them: the role
    // label only (upgrade-2 first, so the cache that sees upgrade-1 so has seen it too).
    const routing = new KubeClient(kubeConfig, { fieldManager: 'postgres-operator-routing' });
    for (const [pod, role] of [
      ['upgrade-2', 'replica'],
      ['upgrade-1', 'replica'],
    ] as const) {
      const current = await client.get(builtin.pods, pod, namespace);
      await routing.apply(builtin.pods, {
        metadata: {
          name: pod,
          namespace,
          labels: { 'postgres.homeostat.dev/role': role },
          annotations: {
            'postgres.homeostat.dev/instance-role':
              current.metadata?.annotations?.['postgres.homeostat.dev/instance-role'] ?? role,
          },
        },
      });
    }
    routing.close();
    await waitUntil(
      'upgrade-1 routed during the operation',
      async () => (await labels('upgrade-1'))?.['postgres.homeostat.dev/routed'] === 'true',
      poll,
    );
    expect((await get('upgrade')).status?.operation?.step).toBe('reinstating');
    expect(await labels('upgrade-1')).toMatchObject({ 'postgres.homeostat.dev/role': 'replica' });
    // The fenced one is left to the operation: no `routed`, so -r does not send reads to it.
    await consistently(
      'upgrade-2 never routed while fenced', // five probe intervals: five reconciles
      async () => (await labels('upgrade-2'))?.['postgres.homeostat.dev/routed'] === undefined,
      { forMs: 1500 },
    );
    await client.delete(postgresClusters, 'upgrade', namespace);
  });

  it('writes an app Secret a client can connect with, and no password anywhere else', async () => {
    const app = await secretData('alpha-app');
    expect(app).toMatchObject({
      username: 'shopper',
      host: `alpha-rw.${namespace}.svc`,
      port: '5432',
      dbname: 'shop',
    });
    expect(app['password']).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(app['uri']).toBe(
      `postgresql://shopper:${app['password']}@alpha-rw.${namespace}.svc:5432/shop?sslmode=verify-full`,
    );
    expect(app['ca.crt']).toBe((await secretData('alpha-ca'))['ca.crt']);
    expect(app['pgpass']).toBe(`alpha-rw.${namespace}.svc:5432:shop:shopper:${app['password']}\n`);
    const replication = await secretData('alpha-replication');
    const operator = await secretData('alpha-operator');
    expect(replication['username']).toBe('streaming_replica');
    expect(operator['username']).toBe('homeostat');
    const passwords = [app['password'], replication['password'], operator['password']];
    expect(new Set(passwords).size).toBe(3);
    // Not in a log line, an Event or the status.
    const cluster = await get('alpha');
    const events = (await client.list(builtin.events, { namespace })).items;
    const exposed = JSON.stringify([lines, events, cluster.status]);
    for (const password of passwords) expect(exposed).not.toContain(password);
  });

  it('reports a cluster whose first primary is not up yet, with observedGeneration', async () => {
    await waitUntil('alpha status', async () => (await get('alpha')).status?.instances === 3, poll);
    const cluster = await get('alpha');
    expect(cluster.status).toMatchObject({
      observedGeneration: 1,
      phase: 'Creating',
      instances: 3,
      readyInstances: 0,
      selector: 'postgres.homeostat.dev/cluster=alpha',
    });
    expect(cluster.status?.currentPrimary).toBeUndefined();
    expect(cluster.status?.instanceStatuses?.map((i) => [i.name, i.role, i.ready])).toEqual([
      ['alpha-0', 'unknown', false],
      ['alpha-1', 'unknown', false],
      ['alpha-2', 'unknown', false],
    ]);
    expect(condition(cluster, 'Available')).toMatchObject({
      status: 'False',
      reason: 'Bootstrapping',
      observedGeneration: 1,
    });
    expect(condition(cluster, 'Progressing')).toMatchObject({ status: 'True', reason: 'Creating' });
    expect(condition(cluster, 'Degraded')).toMatchObject({ status: 'False', reason: 'AsExpected' });
  });

  it('writes nothing more once converged', async () => {
    const versions = async () => {
      const objects = [
        await get('alpha'),
        ...(await listOf(builtin.pods, 'alpha')),
        ...(await listOf(builtin.services, 'alpha')),
        ...(await listOf(builtin.secrets, 'alpha')),
        ...(await listOf(builtin.persistentVolumeClaims, 'alpha')),
        ...(await listOf(builtin.podDisruptionBudgets, 'alpha')),
      ];
      return objects.map((o) => `${o.metadata?.name}@${o.metadata?.resourceVersion}`).sort();
    };
    const before = (await versions()).join(' ');
    let now = before;
    await consistently(
      'no object written again', // five probe intervals: five reconciles
      async () => (now = (await versions()).join(' ')) === before,
      { forMs: 1500, describe: () => `before: ${before}\nnow: ${now}` },
    );
  });

  it('publishes the superuser only while superuserAccess is on', async () => {
    await client.patch(
      postgresClusters,
      'alpha',
      namespace,
      { spec: { superuserAccess: true } },
      { patchType: 'merge' },
    );
    await waitUntil(
      'alpha-superuser',
      async () => (await client.find(builtin.secrets, 'alpha-superuser', namespace)) !== undefined,
      poll,
    );
    expect(await secretData('alpha-superuser')).toMatchObject({ username: 'postgres', dbname: 'postgres' });
    await client.patch(
      postgresClusters,
      'alpha',
      namespace,
      { spec: { superuserAccess: false } },
      { patchType: 'merge' },
    );
    await waitUntil(
      'alpha-superuser gone',
      async () => (await client.find(builtin.secrets, 'alpha-superuser', namespace)) === undefined,
      poll,
    );
  });

  it('scales up and down with the instances, claims going with the removed ones', async () => {
    await create('scaled', { instances: 2 });
    await waitUntil('scaled: 2 pods', async () => (await listOf(builtin.pods, 'scaled')).length === 2, poll);
    await client.patch(
      postgresClusters,
      'scaled',
      namespace,
      { spec: { replicas: 4 } },
      { subresource: 'scale' },
    );
    await waitUntil('scaled: 4 pods', async () => (await listOf(builtin.pods, 'scaled')).length === 4, poll);
    expect(names(await listOf(builtin.persistentVolumeClaims, 'scaled'))).toEqual([
      'scaled-0',
      'scaled-1',
      'scaled-2',
      'scaled-3',
    ]);
    await client.patch(
      postgresClusters,
      'scaled',
      namespace,
      { spec: { instances: 1 } },
      { patchType: 'merge' },
    );
    await waitUntil('scaled: 1 pod', async () => (await listOf(builtin.pods, 'scaled')).length === 1, poll);
    // The claims are deleted; the pvc-protection finalizer (a kube-controller-manager's to remove,
    // and there is none here) keeps them listed, as terminating.
    await waitUntil(
      'scaled: 3 claims deleted',
      async () =>
        (await listOf(builtin.persistentVolumeClaims, 'scaled')).filter((c) => !c.metadata?.deletionTimestamp)
          .length === 1,
      poll,
    );
    expect(names(await listOf(builtin.pods, 'scaled'))).toEqual(['scaled-0']);
    expect(await listOf(builtin.podDisruptionBudgets, 'scaled')).toEqual([]);
    expect((await eventsAbout('scaled', 'InstancesRemoved'))[0]?.note).toBe(
      'removed scaled-1, scaled-2, scaled-3 and their claims',
    );
  });

  it('turns what the API server refuses downstream into a Degraded condition and a Warning Event', async () => {
    // A toleration the CRD lets through and the pod's own validation refuses.
    await create('refused', {
      instances: 1,
      scheduling: { tolerations: [{ key: 'db', operator: 'Exists', value: 'x' }] },
    });
    await waitUntil(
      'Degraded ApplyFailed',
      async () => condition(await get('refused'), 'Degraded')?.reason === 'ApplyFailed',
      poll,
    );
    expect(condition(await get('refused'), 'Degraded')?.message).toMatch(
      /^creating Pod refused-0: .*toleration/i,
    );
    await waitUntil(
      'ApplyFailed event',
      async () => (await eventsAbout('refused', 'ApplyFailed')).length > 0,
      poll,
    );
    expect((await eventsAbout('refused', 'ApplyFailed'))[0]?.type).toBe('Warning');
    await client.patch(
      postgresClusters,
      'refused',
      namespace,
      { spec: { scheduling: { tolerations: null } } },
      { patchType: 'merge' },
    );
    await waitUntil(
      'Degraded cleared',
      async () => condition(await get('refused'), 'Degraded')?.reason !== 'ApplyFailed',
      poll,
    );
    expect(await client.find(builtin.pods, 'refused-0', namespace)).toBeDefined();
  });

  it('with storage.retention Retain leaves claims and Secrets unowned, also when switched to it', async () => {
    await create('kept', { instances: 2 });
    // The TLS Secrets (kept-ca, kept-server) stay owned whatever the retention: a cluster created
    // again gets a new CA, and no data depends on the old one.
    // The CA and the serving certificate (the backup client's is made only when a backup needs it).
    const { ca, server } = tlsSecretNames('kept');
    const tls = [ca, server];
    const credentials = async () =>
      (await listOf(builtin.secrets, 'kept')).filter((s) => !tls.includes(s.metadata?.name ?? ''));
    const owned = async () =>
      [...(await credentials()), ...(await listOf(builtin.persistentVolumeClaims, 'kept'))].map((o) => [
        o.metadata?.name,
        (o.metadata?.ownerReferences ?? []).length,
      ]);
    // The claims are made after the Secrets, in another turn: a loaded machine sees the gap.
    await waitUntil('kept: 3 Secrets and 2 claims', async () => (await owned()).length === 5, poll);
    // Delete, the default: garbage collection takes them with the cluster (they are owned by it).
    expect(await owned()).toEqual([
      ['kept-app', 1],
      ['kept-operator', 1],
      ['kept-replication', 1],
      ['kept-0', 1],
      ['kept-1', 1],
    ]);
    const before = await secretData('kept-app');
    await client.patch(postgresClusters, 'kept', namespace, { spec: { storage: { retention: 'Retain' } } });
    await waitUntil(
      'kept: nothing owned any more',
      async () => (await owned()).every(([, n]) => n === 0),
      poll,
    );
    // The same Secrets, the same passwords: the data logs in with them.
    expect(await secretData('kept-app')).toEqual(before);
    for (const name of tls)
      expect(
        (await client.get(builtin.secrets, name, namespace)).metadata?.ownerReferences,
        name,
      ).toHaveLength(1);
  });

  it('never adopts an object of the same name that it does not own', async () => {
    await client.create(builtin.services, {
      metadata: { name: 'squat-rw', namespace },
      spec: { ports: [{ port: 80 }] },
    });
    await create('squat', { instances: 1 });
    await waitUntil(
      'Degraded on the squatted Service',
      async () => condition(await get('squat'), 'Degraded')?.status === 'True',
      poll,
    );
    expect(condition(await get('squat'), 'Degraded')).toMatchObject({
      reason: 'NameTaken',
      message: expect.stringContaining(
        'Service squat-rw: an object of this name exists and is not controlled by this PostgreSQLCluster',
      ),
    });
    expect(
      (await client.get(builtin.services, 'squat-rw', namespace)).metadata?.ownerReferences,
    ).toBeUndefined();
  });
});
