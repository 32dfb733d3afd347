// DRAFT, not run by `npm run e2e` (the name does not end in .e2e.test.ts): its first run on the
// local cluster refused the even size as expected, then timed out waiting for the one-member
// cluster to be Ready (300 s), while the shared cluster was being torn down and rebuilt by another
// run; the cause is not known yet. Rename it to etcd-operator.cluster.e2e.test.ts once it passes.
// Runs against the cluster in KUBECONFIG: the etcd operator installed from its Helm chart into a
// namespace that enforces the `restricted` Pod Security Standard; an invalid EtcdCluster refused
// with its message; a one-member cluster with TLS (the default) Ready, keys written and read over
// TLS; scaled 1 → 3 with every key on every member. On a cluster without a default StorageClass
// (the local cluster has no provisioner) the suite binds each member's claim to a hostPath volume
// it makes; kind's default class provisions them itself.
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { waitUntil } from '@homeostat/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apply, getObject, kubectl, listObjects } from '../harness/cluster-access.ts';
import { operatorCharts } from '../harness/operator-charts.ts';
import { installOperator, type OperatorRelease } from '../harness/operator-release.ts';
import { createTestNamespace, type TestNamespace } from '../harness/test-namespace.ts';
import { isPodReady } from '../harness/workloads.ts';

const clusterName = 'orders';
const memberSelector = `app.kubernetes.io/name=etcd,app.kubernetes.io/instance=${clusterName}`;

interface EtcdClusterObject {
  metadata: { uid: string; generation: number };
  spec: { size: number };
  status?: {
    phase?: string;
    readyMembers?: number;
    clusterId?: string;
    clientSecret?: string;
    observedGeneration?: number;
    members?: { name: string; role?: string; ready: boolean; id?: string }[];
    conditions?: { type: string; status: string; reason: string; message: string }[];
  };
}

describe('etcd operator from its Helm chart, on the cluster in KUBECONFIG', () => {
  let namespace: TestNamespace;
  let ns: string;
  let operator: OperatorRelease;
  let volumesDir: string | undefined;
  const volumes: string[] = [];

  const cluster = () => getObject<EtcdClusterObject>('etcdcluster', clusterName, ns);

  /** Hostpath volumes pre-bound to the members' claims, where no StorageClass would provision them. */
  async function provideVolumes(count: number): Promise<void> {
    const classes = await listObjects<{ metadata: { annotations?: Record<string, string> } }>(
      'storageclasses',
      'default', // cluster-scoped: the namespace is ignored
    );
    const defaulted = classes.some(
      (c) => c.metadata.annotations?.['storageclass.kubernetes.io/is-default-class'] === 'true',
    );
    if (defaulted) return;
    volumesDir ??= join('/tmp', `homeostat-e2e-${ns}`);
    for (let i = 0; i < count; i++) {
      const claim = `${clusterName}-${i}-data`;
      const name = `${ns}-${claim}`;
      if (volumes.includes(name)) continue;
      const path = join(volumesDir, claim);
      // Members run as a non-root user and kubelet applies no fsGroup to a hostPath volume.
      await mkdir(path, { recursive: true, mode: 0o777 });
      await apply([
        {
          apiVersion: 'v1',
          kind: 'PersistentVolume',
          metadata: { name, labels: { 'app.kubernetes.io/part-of': 'homeostat-e2e' } },
          spec: {
            capacity: { storage: '1Gi' },
            accessModes: ['ReadWriteOnce'],
            persistentVolumeReclaimPolicy: 'Retain',
            storageClassName: '',
            hostPath: { path, type: 'Directory' },
            claimRef: { namespace: ns, name: claim },
          },
        },
      ]);
      volumes.push(name);
    }
  }

  /** Waits until status shows `size` ready voting members and the cluster Running. */
  async function waitForMembers(size: number): Promise<EtcdClusterObject> {
    let last: EtcdClusterObject | undefined;
    await waitUntil(
      `EtcdCluster ${ns}/${clusterName}: ${size} ready voting members`,
      async () => {
        last = await cluster();
        const voters = last?.status?.members?.filter((m) => m.role === 'Voter' && m.ready) ?? [];
        const pods = await listObjects<V1Pod>('pods', ns, memberSelector);
        return (
          last?.status?.phase === 'Running' &&
          voters.length === size &&
          pods.length === size &&
          pods.every(isPodReady)
        );
      },
      { timeoutMs: 300_000, intervalMs: 2000, describe: () => `status: ${JSON.stringify(last?.status)}` },
    );
    if (!last) throw new Error('unreachable: waitUntil returned without an EtcdCluster');
    return last;
  }

  /** etcdctl inside a member's pod, over TLS with the certificate the operator made for it. */
  function etcdctl(member: string, args: readonly string[]): Promise<string> {
    const tls = '/etc/etcd/tls/server';
    return kubectl([
      '-n',
      ns,
      'exec',
      member,
      '-c',
      'etcd',
      '--',
      'etcdctl',
      '--endpoints=https://localhost:2379',
      `--cacert=${tls}/ca.crt`,
      `--cert=${tls}/tls.crt`,
      `--key=${tls}/tls.key`,
      ...args,
    ]);
  }

  beforeAll(async () => {
    namespace = await createTestNamespace('e2e-etcd-operator');
    ns = namespace.name;
    operator = await installOperator(operatorCharts.etcd, ns);
  });

  afterAll(async () => {
    await operator?.cleanup();
    await namespace?.remove();
    for (const volume of volumes)
      await kubectl(['delete', 'pv', volume, '--ignore-not-found']).catch(() => '');
    if (volumesDir) await rm(volumesDir, { recursive: true, force: true });
  });

  it('refuses an even size at the API server, saying why', async () => {
    const invalid = {
      apiVersion: 'etcd.homeostat.dev/v1alpha1',
      kind: 'EtcdCluster',
      metadata: { name: 'even', namespace: ns },
      spec: { size: 2 },
    };
    await expect(apply([invalid])).rejects.toThrow(
      /size must be odd \(1, 3, 5 or 7\): etcd needs a majority/,
    );
  });

  it('runs a one-member cluster with TLS, Ready, and serves keys written and read over TLS', async () => {
    await provideVolumes(1);
    await apply([
      {
        apiVersion: 'etcd.homeostat.dev/v1alpha1',
        kind: 'EtcdCluster',
        metadata: { name: clusterName, namespace: ns },
        spec: { size: 1, storage: { size: '1Gi' } },
      },
    ]);
    const status = (await waitForMembers(1)).status;
    expect(status?.clusterId).toMatch(/^[0-9a-f]+$/);
    expect(status?.clientSecret).toBe(`${clusterName}-client-tls`);
    for (let i = 0; i < 20; i++) await etcdctl(`${clusterName}-0`, ['put', `k${i}`, `v${i}`]);
    expect((await etcdctl(`${clusterName}-0`, ['get', 'k7', '--print-value-only'])).trim()).toBe('v7');
  });

  it('scales 1 → 3 one member at a time, every key on every member', async () => {
    await provideVolumes(3);
    await kubectl(['-n', ns, 'scale', `etcdcluster/${clusterName}`, '--replicas=3']);
    const status = (await waitForMembers(3)).status;
    expect(status?.members?.map((m) => m.name)).toEqual([0, 1, 2].map((i) => `${clusterName}-${i}`));
    for (const member of status?.members ?? []) {
      const values = await etcdctl(member.name, [
        'get',
        'k',
        '--prefix',
        '--print-value-only',
        '--consistency=s',
      ]);
      expect(values.trim().split('\n').sort(), member.name).toEqual(
        Array.from({ length: 20 }, (_, i) => `v${i}`).sort(),
      );
    }
    const reasons = (
      await listObjects<{ reason: string; regarding?: { name: string; kind: string } }>(
        'events.events.k8s.io',
        ns,
      )
    )
      .filter((e) => e.regarding?.kind === 'EtcdCluster' && e.regarding.name === clusterName)
      .map((e) => e.reason);
    expect(reasons).toEqual(expect.arrayContaining(['MemberAdded', 'MemberPromoted']));
  });
});
