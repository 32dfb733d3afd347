// `storage.retention: Retain`: a cluster deleted and created again with the same name comes back
// from its claims with every row, writable, its application's credentials still good, whichever
// instance was primary before. A real kube-apiserver + etcd, real PostgreSQL processes as the pods
// (test-support/pod-processes.ts), whose data directories outlive the pods as a claim's volume
// does. The test control plane runs no garbage collector: a stand-in does what it does.
import { describe, expect, it } from 'vitest';
import { waitUntil } from '@homeostat/testing';
import { builtin } from '@homeostat/reconcile';
import { GarbageCollectorStandIn } from '@homeostat/reconcile/testing';
import { postgresClusters } from '../api/postgres-cluster-types.ts';
import { defaultConnectOptions, withConnection, type Credentials } from '../instance/instance.ts';
import { createCluster, podClusterSuite, settled } from '../test-support/pod-cluster.ts';
import { secretNames } from './cluster-names.ts';

const instances = ['ledger-0', 'ledger-1', 'ledger-2'];
// Synchronous commits: the failover below loses no acknowledged row (asynchronous mode may lose
// the last ones, which is not what this test is about), so every row must come back.
const spec = {
  instances: 3,
  failoverDelay: '1s',
  storage: { retention: 'Retain' },
  postgresql: { synchronous: { mode: 'required', number: 1 } },
};

describe('storage.retention Retain: real kube-apiserver, real PostgreSQL processes as pods', () => {
  const { client, namespace, cluster, pods, get, events, slow } = podClusterSuite({
    namespace: `pg-retain-${process.pid}`,
    cluster: 'ledger',
    spec,
    tearDown: () => garbageCollector.stop(),
  });
  const garbageCollector = new GarbageCollectorStandIn(client, namespace);

  it('brings a cluster created again back from its claims: every row, writable, the same credentials', async () => {
    await waitUntil('ledger Healthy with 3 ready instances', async () => settled(await get()), slow);
    const app = await appCredentials();
    await sqlAsApp(app, 'CREATE TABLE entries (id int PRIMARY KEY)');
    await insert(app, 1, 50);

    // The primary moves off ledger-0 (frozen: alive, answering nothing), and rows are written after.
    pods.instance('ledger-0').freeze();
    await waitUntil(
      'a failover away from ledger-0, then Healthy',
      async () => {
        const c = await get();
        return c.status?.currentPrimary !== 'ledger-0' && settled(c);
      },
      slow,
    );
    const primary = (await get()).status?.currentPrimary ?? '';
    expect(primary).not.toBe('ledger-0');
    await insert(app, 51, 250);
    const all = Array.from({ length: 250 }, (_, i) => i + 1);
    expect(await ids(app), 'every row before the cluster is deleted').toEqual(all);

    const uid = (await get()).metadata?.uid ?? '';
    await client.delete(postgresClusters, cluster, namespace);
    await garbageCollector.collect(uid);
    await waitUntil(
      'the pods gone, their processes stopped',
      async () =>
        (await client.list(builtin.pods, { namespace })).items.length === 0 &&
        instances.every((i) => !pods.instance(i).isRunning()),
      slow,
    );
    const claims = (await client.list(builtin.persistentVolumeClaims, { namespace })).items;
    expect(claims.map((c) => [c.metadata?.name, c.metadata?.ownerReferences ?? []])).toEqual(
      instances.map((i) => [i, []]),
    );
    const startsBefore = pods.starts.length;

    await createCluster(client, namespace, cluster, spec);
    await waitUntil(
      'ledger created again, Healthy with 3 ready instances',
      async () => settled(await get()),
      slow,
    );

    // The application's Secret, read again, logs in; every row is there, and it takes writes.
    const again = await appCredentials();
    expect(again).toEqual(app);
    expect(await ids(again)).toEqual(all);
    await insert(again, 251, 251);
    expect((await ids(again)).length).toBe(251);
    const status = (await get()).status;
    expect(status?.readyInstances).toBe(3);
    expect(status?.failovers ?? 0).toBe(0);
    // No instance was assumed primary: each first started as a standby, one was promoted.
    const firstStarts = instances.map((i) => pods.starts.slice(startsBefore).find((s) => s.pod === i)?.role);
    expect(firstStarts).toEqual(['replica', 'replica', 'replica']);
    expect((await events('Promoted')).map((e) => e.note)).toContainEqual(
      expect.stringMatching(/goes furthest .* among the instances kept from the earlier cluster/),
    );
  }, 400_000);

  async function appCredentials(): Promise<Credentials> {
    const secret = await client.get(builtin.secrets, secretNames(cluster).app, namespace);
    const field = (key: string) => Buffer.from(secret.data?.[key] ?? '', 'base64').toString();
    return { user: field('username'), password: field('password'), database: field('dbname') };
  }
  const sqlAsApp = (credentials: Credentials, text: string) =>
    withConnection(
      { name: 'ledger-rw', host: '127.0.0.1', port: pods.readWritePort, ...(pods.ca ? { ca: pods.ca } : {}) },
      credentials,
      defaultConnectOptions,
      (c) => c.query(text),
    );
  const insert = (credentials: Credentials, from: number, to: number) =>
    sqlAsApp(credentials, `INSERT INTO entries SELECT generate_series(${from}, ${to})`);
  const ids = async (credentials: Credentials) =>
    (await sqlAsApp(credentials, 'SELECT id FROM entries ORDER BY id')).rows.map((r) => Number(r['id']));
});
