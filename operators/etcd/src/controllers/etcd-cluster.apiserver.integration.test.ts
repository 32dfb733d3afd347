// The EtcdCluster controller against a real kube-apiserver + etcd, with no node: no member pod
// ever runs, so no etcd member answers. What is checked is what the operator writes: the objects,
// their owners and specs, the status and Events, and what it refuses. (The etcd-backed suite
// next to this one runs real members for the pods.)
import { X509Certificate } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consistently, installCrds, waitUntil } from '@homeostat/testing';
import { sharedKubeConfig } from '@homeostat/testing/shared';
import { builtin, KubeClient, type Manager } from '@homeostat/reconcile';
import { memoryLogger } from '@homeostat/reconcile/testing';
import { etcdBackupCrd } from '../api/etcd-backup-crd.ts';
import { etcdClusterCrd } from '../api/etcd-cluster-crd.ts';
import { etcdClusters } from '../api/etcd-cluster-types.ts';
import { imageOf } from '../api/etcd-versions.ts';
import {
  conditionOf,
  createEtcdCluster,
  createTestNamespace,
  eventsAbout,
  startTestOperator,
} from '../test-support/etcd-cluster-fixtures.ts';
import { loopbackAddressing } from '../test-support/loopback-addressing.ts';

const kubeConfig = sharedKubeConfig();
const namespace = `etcd-ctl-${process.pid}`;
const client = new KubeClient(kubeConfig, { fieldManager: 'test-user' });
const poll = { timeoutMs: 30_000 };
const get = (name: string) => client.get(etcdClusters, name, namespace);
const noTls = { tls: { enabled: false } };

describe('EtcdCluster controller on a real kube-apiserver (no node, so no member answers)', () => {
  const { log } = memoryLogger();
  const addressing = loopbackAddressing();
  let manager: Manager;

  beforeAll(async () => {
    await installCrds(kubeConfig, [etcdClusterCrd, etcdBackupCrd]);
    await createTestNamespace(client, namespace);
    manager = await startTestOperator(kubeConfig, namespace, addressing, log);
  });

  afterAll(async () => {
    await manager?.stop();
    await client.delete(builtin.namespaces, namespace).catch(() => undefined);
    client.close();
  });

  it('creates the Services, then member 0 alone (claim and pod) as a new cluster, all owned by the EtcdCluster', async () => {
    const created = await createEtcdCluster(client, 'alpha', namespace, { size: 3, ...noTls });
    await waitUntil(
      'member 0 pod',
      async () => (await client.find(builtin.pods, 'alpha-0', namespace)) !== undefined,
      poll,
    );
    const owner = {
      apiVersion: 'etcd.homeostat.dev/v1alpha1',
      kind: 'EtcdCluster',
      name: 'alpha',
      uid: created.metadata?.uid,
      controller: true,
      blockOwnerDeletion: true,
    };

    const peers = await client.get(builtin.services, 'alpha-peers', namespace);
    expect(peers.metadata?.ownerReferences).toEqual([owner]);
    expect(peers.spec).toMatchObject({ clusterIP: 'None', publishNotReadyAddresses: true });
    expect(peers.spec?.ports?.map((p) => [p.name, p.port])).toEqual([
      ['peer', 2380],
      ['client', 2379],
      ['metrics', 2381],
    ]);
    const service = await client.get(builtin.services, 'alpha', namespace);
    expect(service.metadata?.ownerReferences).toEqual([owner]);
    expect(service.spec?.selector).toEqual({
      'app.kubernetes.io/name': 'etcd',
      'app.kubernetes.io/instance': 'alpha',
    });
    const pdb = await client.get(builtin.podDisruptionBudgets, 'alpha', namespace);
    expect(pdb.spec?.maxUnavailable).toBe(1);

    const claim = await client.get(builtin.persistentVolumeClaims, 'alpha-0-data', namespace);
    expect(claim.metadata?.ownerReferences).toEqual([owner]);
    expect(claim.metadata?.annotations?.['etcd.homeostat.dev/member-id']).toBe('seed');
    expect(claim.spec?.resources?.requests?.['storage']).toBe('8Gi');

    const pod = await client.get(builtin.pods, 'alpha-0', namespace);
    expect(pod.metadata?.ownerReferences).toEqual([owner]);
    expect(pod.metadata?.labels).toMatchObject({
      'etcd.homeostat.dev/member': 'alpha-0',
      'app.kubernetes.io/component': 'member',
    });
    expect(pod.spec).toMatchObject({
      hostname: 'alpha-0',
      subdomain: 'alpha-peers',
      automountServiceAccountToken: false,
    });
    const container = pod.spec?.containers[0];
    expect(container?.image).toBe(imageOf(created.spec.version));
    const urls = await addressing.urls(created, 'alpha-0');
    expect(container?.args).toEqual(
      expect.arrayContaining([
        '--name=alpha-0',
        '--data-dir=/var/lib/etcd/data',
        `--initial-advertise-peer-urls=${urls.peerUrl}`,
        `--advertise-client-urls=${urls.clientUrl}`,
        `--initial-cluster=alpha-0=${urls.peerUrl}`,
        '--initial-cluster-state=new',
        `--initial-cluster-token=${created.metadata?.uid ?? ''}`,
      ]),
    );
    // Pod Security "restricted".
    expect(pod.spec?.securityContext).toMatchObject({
      runAsNonRoot: true,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(container?.securityContext).toEqual({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
    });
    expect(container?.readinessProbe?.httpGet).toMatchObject({ path: '/readyz', port: 'metrics' });
    expect(pod.spec?.topologySpreadConstraints?.[0]).toMatchObject({
      topologyKey: 'kubernetes.io/hostname',
      whenUnsatisfiable: 'ScheduleAnyway',
    });
    // Only the seed: the others join as learners once it answers.
    expect(await client.find(builtin.pods, 'alpha-1', namespace)).toBeUndefined();

    await waitUntil('status Creating', async () => (await get('alpha')).status?.phase === 'Creating', poll);
    const status = (await get('alpha')).status;
    expect(status?.clusterId).toBeUndefined();
    expect(status?.selector).toBe('app.kubernetes.io/name=etcd,app.kubernetes.io/instance=alpha');
    expect(conditionOf(await get('alpha'), 'Available')).toMatchObject({
      status: 'False',
      reason: 'Creating',
      observedGeneration: 1,
    });
    expect(conditionOf(await get('alpha'), 'Progressing')).toMatchObject({
      status: 'True',
      reason: 'Creating',
    });
    expect((await eventsAbout(client, namespace, 'alpha', 'MemberPodCreated'))[0]).toMatchObject({
      type: 'Normal',
      reportingController: 'etcd-operator',
      note: 'created pod alpha-0 (first member of a new cluster)',
    });
  });

  it('with TLS (the default) makes a CA and certificates in Secrets first, and mounts them in the pods', async () => {
    await createEtcdCluster(client, 'secure', namespace, { size: 1 });
    await waitUntil(
      'pod',
      async () => (await client.find(builtin.pods, 'secure-0', namespace)) !== undefined,
      poll,
    );
    const secret = (name: string) => client.get(builtin.secrets, name, namespace);
    const ca = await secret('secure-ca');
    expect(Object.keys(ca.data ?? {}).sort()).toEqual(['ca.crt', 'ca.key']);
    expect(ca.metadata?.ownerReferences?.[0]?.name).toBe('secure');
    const caCert = new X509Certificate(Buffer.from(ca.data?.['ca.crt'] ?? '', 'base64'));
    for (const name of ['secure-server-tls', 'secure-peer-tls', 'secure-client-tls']) {
      const tls = await secret(name);
      expect(tls.type).toBe('kubernetes.io/tls');
      const cert = new X509Certificate(Buffer.from(tls.data?.['tls.crt'] ?? '', 'base64'));
      expect(cert.checkIssued(caCert), name).toBe(true);
      expect(new X509Certificate(Buffer.from(tls.data?.['ca.crt'] ?? '', 'base64')).fingerprint256).toBe(
        caCert.fingerprint256,
      );
    }
    const serving = new X509Certificate(
      Buffer.from((await secret('secure-server-tls')).data?.['tls.crt'] ?? '', 'base64'),
    );
    // The test's addressing is loopback; in a cluster the names are the Services' (see desired-objects.test.ts).
    expect(serving.checkIP('127.0.0.1')).toBe('127.0.0.1');

    const pod = await client.get(builtin.pods, 'secure-0', namespace);
    const args = pod.spec?.containers[0]?.args ?? [];
    expect(args).toEqual(
      expect.arrayContaining([
        '--cert-file=/etc/etcd/tls/server/tls.crt',
        '--client-cert-auth=true',
        '--peer-trusted-ca-file=/etc/etcd/tls/peer/ca.crt',
        '--peer-client-cert-auth=true',
      ]),
    );
    expect(args.find((a) => a.startsWith('--advertise-client-urls='))).toMatch(/=https:/);
    expect(pod.spec?.volumes?.map((v) => [v.name, v.secret?.secretName])).toEqual([
      ['data', undefined],
      ['server-tls', 'secure-server-tls'],
      ['peer-tls', 'secure-peer-tls'],
    ]);
    await waitUntil(
      'status',
      async () => (await get('secure')).status?.clientSecret === 'secure-client-tls',
      poll,
    );
    expect((await eventsAbout(client, namespace, 'secure', 'CertificatesCreated'))[0]?.note).toBe(
      'created Secrets secure-ca, secure-server-tls, secure-peer-tls, secure-client-tls',
    );
  });

  it('uses provided TLS Secrets as they are, and says which one is unusable', async () => {
    await client.create(builtin.secrets, {
      metadata: { name: 'mine-client', namespace },
      type: 'kubernetes.io/tls',
      data: { 'tls.crt': 'eA==', 'tls.key': 'eA==' },
    });
    await createEtcdCluster(client, 'byo', namespace, {
      size: 1,
      tls: {
        enabled: true,
        provided: {
          serverSecretName: 'mine-server',
          peerSecretName: 'mine-peer',
          clientSecretName: 'mine-client',
        },
      },
    });
    await waitUntil(
      'Degraded',
      async () => conditionOf(await get('byo'), 'Degraded')?.status === 'True',
      poll,
    );
    expect(conditionOf(await get('byo'), 'Degraded')).toMatchObject({
      reason: 'ClientCertificateUnusable',
      message:
        'Secret mine-client must hold ca.crt, tls.crt and tls.key (a kubernetes.io/tls Secret with the CA)',
    });
    expect(await client.find(builtin.secrets, 'byo-ca', namespace)).toBeUndefined();
  });

  it('makes a deleted seed pod again, with its claim kept', async () => {
    await createEtcdCluster(client, 'phoenix', namespace, { size: 1, ...noTls });
    await waitUntil(
      'pod',
      async () => (await client.find(builtin.pods, 'phoenix-0', namespace)) !== undefined,
      poll,
    );
    const claimUid = (await client.get(builtin.persistentVolumeClaims, 'phoenix-0-data', namespace)).metadata
      ?.uid;
    const podUid = (await client.get(builtin.pods, 'phoenix-0', namespace)).metadata?.uid;
    await client.delete(builtin.pods, 'phoenix-0', namespace);
    await waitUntil(
      'pod made again',
      async () => {
        const pod = await client.find(builtin.pods, 'phoenix-0', namespace);
        return pod !== undefined && pod.metadata?.uid !== podUid;
      },
      poll,
    );
    expect(
      (await client.get(builtin.persistentVolumeClaims, 'phoenix-0-data', namespace)).metadata?.uid,
    ).toBe(claimUid);
    // A single member needs no disruption budget.
    expect(await client.find(builtin.podDisruptionBudgets, 'phoenix', namespace)).toBeUndefined();
  });

  it('changes nothing for a paused cluster, and says so', async () => {
    await createEtcdCluster(client, 'resting', namespace, { size: 1, paused: true, ...noTls });
    await waitUntil('Paused', async () => (await get('resting')).status?.phase === 'Paused', poll);
    expect(conditionOf(await get('resting'), 'Progressing')).toMatchObject({
      status: 'False',
      reason: 'Paused',
    });
    expect(await client.find(builtin.services, 'resting', namespace)).toBeUndefined();
    expect(await client.find(builtin.pods, 'resting-0', namespace)).toBeUndefined();

    await client.patch(etcdClusters, 'resting', namespace, { spec: { paused: false } });
    await waitUntil(
      'unpaused: pod',
      async () => (await client.find(builtin.pods, 'resting-0', namespace)) !== undefined,
      poll,
    );
  });

  it('reports a Service name taken by someone else as Degraded with a Warning, and never adopts it', async () => {
    await client.create(builtin.services, {
      metadata: { name: 'squatter', namespace },
      spec: { ports: [{ port: 80 }] },
    });
    await createEtcdCluster(client, 'squatter', namespace, { size: 1, ...noTls });
    await waitUntil(
      'Degraded',
      async () => conditionOf(await get('squatter'), 'Degraded')?.status === 'True',
      poll,
    );
    expect(conditionOf(await get('squatter'), 'Degraded')).toMatchObject({
      reason: 'NameTaken',
      message:
        'Service squatter: an object of this name exists and is not controlled by this EtcdCluster; rename or delete it',
    });
    expect((await eventsAbout(client, namespace, 'squatter', 'NameTaken'))[0]?.type).toBe('Warning');
    // Said once while it lasts, not at every look (the test bed looks every second).
    await consistently(
      'one NameTaken Warning, not repeated',
      async () => {
        const events = await eventsAbout(client, namespace, 'squatter', 'NameTaken');
        return events.length === 1 && (events[0]?.series?.count ?? 1) === 1;
      },
      { forMs: 3500, intervalMs: 500 },
    );
    expect(
      (await client.get(builtin.services, 'squatter', namespace)).metadata?.ownerReferences,
    ).toBeUndefined();
    expect(await client.find(builtin.pods, 'squatter-0', namespace)).toBeUndefined();
  });

  it('refuses a restore from a backup that does not exist: Degraded, Restoring False and a Warning, creating nothing', async () => {
    await createEtcdCluster(client, 'restored', namespace, {
      size: 1,
      ...noTls,
      bootstrap: { fromBackup: { backupName: 'nightly' } },
    });
    await waitUntil(
      'Degraded',
      async () => conditionOf(await get('restored'), 'Degraded')?.status === 'True',
      poll,
    );
    const message = 'EtcdBackup nightly does not exist; nothing was created';
    expect(conditionOf(await get('restored'), 'Degraded')).toMatchObject({
      reason: 'BackupNotFound',
      message,
    });
    expect(conditionOf(await get('restored'), 'Restoring')).toMatchObject({
      status: 'False',
      reason: 'BackupNotFound',
      message,
    });
    await waitUntil(
      'Warning',
      async () => (await eventsAbout(client, namespace, 'restored', 'BackupNotFound')).length > 0,
      poll,
    );
    expect(await client.find(builtin.pods, 'restored-0', namespace)).toBeUndefined();
  });
});
