// The etcd operator on the cluster in KUBECONFIG, installed from its Helm chart into a namespace
// that enforces the `restricted` Pod Security Standard (operator and members both run there):
// an invalid EtcdCluster refused with its message; a one-member cluster scaled 1 → 3 → 5 → 3 with
// every key on every member at each size; a three-member cluster from the start, reached by a
// client pod over TLS with the credentials the operator generated; a deleted member pod back with
// its identity and data; a member whose volume is lost replaced; the operator killed right after
// each member add, before the member starts, with no member duplicated or lost. Figures (time to
// scale 3 → 5, the upgrade) are printed, never asserted. A three-member cluster on etcd 3.6 is
// upgraded to 3.7 one member at a time, each member's version checked, and going back refused
// once etcd's cluster version moved.
// A three-member cluster is backed up to a real S3-compatible server running in the cluster (its
// own namespace) and to a claim; the S3 backup is restored into a new cluster (every key and hashKV
// equal to the source's, the seconds it took printed) and, once one byte of it is flipped in the
// bucket, refused with BackupCorrupt and nothing created. A restore drill requested with the
// guide's annotation proves a newer S3 backup (BackupVerified True, its HashKV as recorded, the
// drill's pod and claim gone, the source untouched); once that object's byte is flipped, the next
// drill says SnapshotCorrupt and keeps the last proof on record. A three-member cluster whose majority is
// lost with its data is recovered from its newest backup, kept in a claim.
// Members' claims come from the cluster's default StorageClass (the local cluster's and kind's
// are both `standard`, local-path-provisioner).
import { setTimeout as sleep } from 'node:timers/promises';
import type { V1Pod } from '@kubernetes/client-node';
import { waitUntil } from '@homeostat/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apply, getObject, kubectl, listObjects } from '../harness/cluster-access.ts';
import {
  clusterEventReasons,
  drillSelector,
  etcdMemberList,
  getEtcdCluster,
  memberEtcdctl,
  memberSelector,
  memberHashKV,
  memberPuts,
  memberKeyValues,
  memberValues,
  requestBackupDrill,
  waitForBackup,
  waitForMembers,
} from '../harness/etcd-clusters.ts';
import { operatorCharts } from '../harness/operator-charts.ts';
import { installOperator, type OperatorRelease } from '../harness/operator-release.ts';
import { kubectlHomeostat } from '../harness/kubectl-homeostat.ts';
import { deployS3Server, type ClusterS3Server } from '../harness/s3-server.ts';
import { createTestNamespace, type TestNamespace } from '../harness/test-namespace.ts';
import { isPodReady, runClientPod } from '../harness/workloads.ts';
import { operandImages } from '../images/image-names.ts';

const operatorSelector = 'app.kubernetes.io/name=etcd-operator';
// Small requests: the suite runs up to eight members beside everything else on a two-core node.
const memberResources = { requests: { cpu: '20m', memory: '64Mi' } };

function etcdCluster(namespace: string, name: string, size: number) {
  return {
    apiVersion: 'etcd.homeostat.dev/v1alpha1',
    kind: 'EtcdCluster',
    metadata: { name, namespace },
    spec: { size, storage: { size: '1Gi' }, resources: memberResources },
  };
}

const keys = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => `${prefix}${i}`);
const secondsSince = (start: number) => ((Date.now() - start) / 1000).toFixed(1);

describe('etcd operator from its Helm chart, on the cluster in KUBECONFIG', () => {
  let namespace: TestNamespace;
  let ns: string;
  let operator: OperatorRelease;

  /** Every value under `prefix` on every member of `cluster`, read from each member's own copy. */
  async function expectKeysOnEveryMember(cluster: string, prefix: string, count: number) {
    const status = (await getEtcdCluster(ns, cluster))?.status;
    const expected = keys(`v-${prefix}`, count).sort();
    // Every member read at once (one kubectl exec each), then each compared by name.
    const members = status?.members ?? [];
    const values = await Promise.all(members.map((member) => memberValues(ns, member.name, prefix)));
    members.forEach((member, i) => expect(values[i], member.name).toEqual(expected));
  }

  async function putKeys(member: string, prefix: string, count: number, from = 0) {
    const entries = Array.from(
      { length: count - from },
      (_, i) => [`${prefix}${from + i}`, `v-${prefix}${from + i}`] as const,
    );
    await memberPuts(ns, member, entries);
  }

  async function operatorPods(): Promise<V1Pod[]> {
    return listObjects<V1Pod>('pods', ns, operatorSelector);
  }

  beforeAll(async () => {
    namespace = await createTestNamespace('e2e-etcd-operator');
    ns = namespace.name;
    operator = await installOperator(operatorCharts.etcd, ns);
  });

  afterAll(async () => {
    await operator?.cleanup();
    await namespace?.remove();
  });

  it('passes `helm test`: the operator answers, reconciles the resource the test creates, and the test cleans up', async () => {
    await operator.passesHelmTest('etcdclusters');
  });

  it('runs the operator under Pod Security "restricted" with a read-only root filesystem', async () => {
    const [pod, ...others] = await operatorPods();
    expect(others).toEqual([]);
    expect(pod && isPodReady(pod)).toBe(true);
    expect(pod?.spec?.containers[0]?.securityContext?.readOnlyRootFilesystem).toBe(true);
  });

  it('refuses an invalid EtcdCluster at the API server, saying why', async () => {
    await expect(apply([etcdCluster(ns, 'even', 2)])).rejects.toThrow(
      /size must be odd \(1, 3, 5 or 7\): etcd needs a majority/,
    );
    const unknownVersion = etcdCluster(ns, 'unknown', 1);
    await expect(
      apply([{ ...unknownVersion, spec: { ...unknownVersion.spec, version: '3.4.0' } }]),
    ).rejects.toThrow(/spec.version/);
    expect(await getEtcdCluster(ns, 'even')).toBeUndefined();
  });

  describe('a cluster created with one member', () => {
    const name = 'orders';

    it('is Ready with TLS and serves keys written and read over TLS', async () => {
      await apply([etcdCluster(ns, name, 1)]);
      const status = (await waitForMembers(ns, name, 1)).status;
      expect(status?.clusterId).toMatch(/^[0-9a-f]+$/);
      expect(status?.clientSecret).toBe(`${name}-client-tls`);
      await putKeys(`${name}-0`, 'a', 20);
      expect((await memberEtcdctl(ns, `${name}-0`, ['get', 'a7', '--print-value-only'])).trim()).toBe('v-a7');
    });

    it('scales 1 → 3 → 5 → 3 one member at a time, every key on every member at each size', async () => {
      let written = 20;
      for (const size of [3, 5, 3]) {
        const started = Date.now();
        await kubectl(['-n', ns, 'scale', `etcdcluster/${name}`, `--replicas=${size}`]);
        const status = (await waitForMembers(ns, name, size)).status;
        console.error(`etcd e2e: ${name} scaled to ${size} members in ${secondsSince(started)} s`);
        expect(status?.members?.map((m) => m.name).sort()).toEqual(
          Array.from({ length: size }, (_, i) => `${name}-${i}`).sort(),
        );
        expect(await etcdMemberList(ns, `${name}-0`)).toHaveLength(size);
        await putKeys(`${name}-0`, 'a', written + 10, written);
        written += 10;
        await expectKeysOnEveryMember(name, 'a', written);
      }
      // Scaled down: the removed members' pods and claims are gone.
      const claims = await listObjects<{ metadata: { name: string } }>('persistentvolumeclaims', ns);
      expect(
        claims
          .map((c) => c.metadata.name)
          .filter((c) => c.startsWith(`${name}-`))
          .sort(),
      ).toEqual([0, 1, 2].map((i) => `${name}-${i}-data`));
      expect(await clusterEventReasons(ns, name)).toEqual(
        expect.arrayContaining(['MemberAdded', 'MemberPromoted', 'MemberRemoved']),
      );
      // Frees the node for the next cluster.
      await kubectl(['-n', ns, 'delete', 'etcdcluster', name, '--wait=true', '--timeout=120s']);
    });
  });

  describe('a cluster created with three members', () => {
    const name = 'stock';

    beforeAll(async () => {
      await apply([etcdCluster(ns, name, 3)]);
      await waitForMembers(ns, name, 3);
      await putKeys(`${name}-0`, 's', 30);
    });

    it('bootstraps three voting members that agree on every key', async () => {
      const members = await etcdMemberList(ns, `${name}-1`);
      expect(members.map((m) => [m.name, m.started, m.learner]).sort()).toEqual(
        [0, 1, 2].map((i) => [`${name}-${i}`, true, false]),
      );
      await expectKeysOnEveryMember(name, 's', 30);
    });

    it('lets a client in over TLS through the client Service with the generated credentials', async () => {
      const status = (await getEtcdCluster(ns, name))?.status;
      const secret = status?.clientSecret ?? '';
      expect(secret).toBe(`${name}-client-tls`);
      const etcdctl = (podName: string, args: string[], withCert: boolean) =>
        runClientPod({
          namespace: ns,
          name: podName,
          image: operandImages.etcd,
          runAsUser: 65532,
          secret: { name: secret, mountPath: '/tls' },
          command: [
            'etcdctl',
            `--endpoints=https://${name}.${ns}.svc:2379`,
            '--cacert=/tls/ca.crt',
            ...(withCert ? ['--cert=/tls/tls.crt', '--key=/tls/tls.key'] : []),
            '--command-timeout=10s',
            ...args,
          ],
        });
      // Both clients at once: each is a pod of its own, and neither's answer depends on the other.
      const [read, refused] = await Promise.all([
        etcdctl('tls-client', ['get', 's7', '--print-value-only'], true),
        // Without a client certificate the members turn the client away.
        etcdctl('tls-client-nocert', ['get', 's7'], false),
      ]);
      expect(read.phase, read.logs).toBe('Succeeded');
      expect(read.logs.trim()).toBe('v-s7');
      expect(refused.phase, refused.logs).toBe('Failed');
    });

    it('kubectl homeostat: members and leader at a glance, etcdctl with the client certificate', async () => {
      const status = await kubectlHomeostat(['-n', ns, 'status', `etcdc/${name}`]);
      expect(status).toMatch(new RegExp(`^${name} \\(EtcdCluster, namespace ${ns}\\): Running\n`));
      expect(status).toMatch(/\n {2}leader +\S+/);
      expect(status).toMatch(/Members:\n {2}NAME /);
      const value = await kubectlHomeostat([
        '-n',
        ns,
        'etcdctl',
        name,
        '--',
        'get',
        's7',
        '--print-value-only',
      ]);
      expect(value.trim()).toBe('v-s7');
    });

    it('brings back a deleted member pod with its identity and data', async () => {
      const before = (await getEtcdCluster(ns, name))?.status?.members?.find((m) => m.name === `${name}-2`);
      await kubectl(['-n', ns, 'delete', 'pod', `${name}-2`, '--wait=true']);
      const status = (await waitForMembers(ns, name, 3)).status;
      const after = status?.members?.find((m) => m.name === `${name}-2`);
      expect(after?.id).toBe(before?.id);
      expect(await etcdMemberList(ns, `${name}-0`)).toHaveLength(3);
      await expectKeysOnEveryMember(name, 's', 30);
      expect(await clusterEventReasons(ns, name)).not.toContain('MemberReplaced');
    });

    it('replaces a member whose volume is lost: removed, added back empty as a learner, promoted', async () => {
      const before = (await getEtcdCluster(ns, name))?.status?.members?.find((m) => m.name === `${name}-1`);
      // The claim cannot finish deleting while the pod uses it; the operator sees it going and replaces the member.
      await kubectl(['-n', ns, 'delete', 'pvc', `${name}-1-data`, '--wait=false']);
      await kubectl(['-n', ns, 'delete', 'pod', `${name}-1`, '--wait=false']);
      await waitUntil(
        `member ${name}-1 replaced`,
        async () => {
          const member = (await getEtcdCluster(ns, name))?.status?.members?.find(
            (m) => m.name === `${name}-1`,
          );
          return member?.id !== undefined && member.id !== before?.id;
        },
        { timeoutMs: 300_000, intervalMs: 1000 },
      );
      await waitForMembers(ns, name, 3);
      expect(await etcdMemberList(ns, `${name}-0`)).toHaveLength(3);
      await expectKeysOnEveryMember(name, 's', 30);
      expect(await clusterEventReasons(ns, name)).toContain('MemberReplaced');
    });

    it('converges with no member duplicated or lost when the operator is killed right after each member add', async () => {
      // Each time etcd gets a learner (the MemberAdded Event), the operator pod is deleted at once,
      // before the next reconcile would start the learner's pod; its successor must find the
      // learner in etcd's list and start it, never add a second one.
      const seen = new Set((await listMemberAddedEvents()).map(eventKey));
      let kills = 0;
      let inWindow = 0;
      let watching = true;
      const killer = (async () => {
        while (watching) {
          const fresh = (await listMemberAddedEvents().catch(() => [])).filter((e) => !seen.has(eventKey(e)));
          for (const event of fresh) seen.add(eventKey(event));
          if (fresh.length) {
            const pods = await operatorPods();
            await kubectl([
              '-n',
              ns,
              'delete',
              'pod',
              ...pods.map((p) => p.metadata?.name ?? ''),
              '--grace-period=0',
              '--force',
              '--wait=false',
            ]).catch(() => '');
            kills++;
            // Whether the kill landed between the add and the start: a learner etcd lists as not started.
            const list = await etcdMemberList(ns, `${name}-0`).catch(() => []);
            if (list.some((m) => !m.started)) inWindow++;
          }
          await sleep(200);
        }
      })();
      const started = Date.now();
      try {
        await kubectl(['-n', ns, 'scale', `etcdcluster/${name}`, '--replicas=5']);
        await waitForMembers(ns, name, 5, { timeoutMs: 480_000 });
      } finally {
        watching = false;
        await killer;
      }
      console.error(
        `etcd e2e: ${name} 3 → 5 with the operator killed ${kills} times (${inWindow} between a member add and its start) in ${secondsSince(started)} s`,
      );
      expect(kills).toBeGreaterThanOrEqual(2);
      const members = await etcdMemberList(ns, `${name}-0`);
      expect(members.map((m) => [m.name, m.started, m.learner]).sort()).toEqual(
        [0, 1, 2, 3, 4].map((i) => [`${name}-${i}`, true, false]),
      );
      await putKeys(`${name}-0`, 's', 40, 30);
      await expectKeysOnEveryMember(name, 's', 40);
      const pods = await listObjects<V1Pod>('pods', ns, memberSelector(name));
      expect(pods).toHaveLength(5);
    });

    // Frees the node for the next cluster.
    afterAll(async () => {
      await kubectl(['-n', ns, 'delete', 'etcdcluster', name, '--wait=true', '--timeout=120s']);
    });

    async function listMemberAddedEvents() {
      const events = await listObjects<{
        metadata: { name: string };
        reason: string;
        series?: { count: number };
        regarding?: { name: string; kind: string };
      }>('events.events.k8s.io', ns);
      return events.filter((e) => e.reason === 'MemberAdded' && e.regarding?.name === name);
    }
    function eventKey(e: { metadata: { name: string }; series?: { count: number } }) {
      return `${e.metadata.name}/${e.series?.count ?? 1}`;
    }
  });

  describe('backups of a three-member cluster to a real S3 server and to a claim, restored into new clusters', () => {
    const name = 'vault';
    const bucket = 'etcd-backups';
    let s3: ClusterS3Server;
    let s3Destination: Record<string, unknown>;

    const backup = (backupName: string, destination: object) => ({
      apiVersion: 'etcd.homeostat.dev/v1alpha1',
      kind: 'EtcdBackup',
      metadata: { name: backupName, namespace: ns },
      spec: { clusterName: name, destination },
    });
    const restoredCluster = (clusterName: string, backupName: string, size = 3) => ({
      ...etcdCluster(ns, clusterName, size),
      spec: { ...etcdCluster(ns, clusterName, size).spec, bootstrap: { fromBackup: { backupName } } },
    });

    /** Every key and the hashKV of a restored cluster's members equal the source's at the backup. */
    async function expectSameDataAsSource(restored: string, size: number) {
      const source = await memberKeyValues(ns, `${name}-0`);
      const members = (await getEtcdCluster(ns, restored))?.status?.members ?? [];
      expect(members).toHaveLength(size);
      const first = await memberHashKV(ns, `${restored}-0`);
      const sourceHash = await memberHashKV(ns, `${name}-0`, first.revision);
      for (const member of members) {
        expect(await memberKeyValues(ns, member.name), member.name).toBe(source);
        expect(await memberHashKV(ns, member.name, first.revision), member.name).toEqual(sourceHash);
      }
    }

    beforeAll(async () => {
      s3 = await deployS3Server([bucket]);
      await s3.credentialsSecret(ns, 'backup-bucket');
      s3Destination = {
        s3: {
          bucket,
          prefix: 'e2e/',
          endpoint: s3.endpoint,
          region: s3.region,
          forcePathStyle: true,
          credentialsSecretName: 'backup-bucket',
        },
      };
      await apply([
        {
          apiVersion: 'v1',
          kind: 'PersistentVolumeClaim',
          metadata: { name: 'backups', namespace: ns },
          spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
        },
        etcdCluster(ns, name, 3),
      ]);
      await waitForMembers(ns, name, 3);
      await putKeys(`${name}-0`, 'b', 30);
    });

    afterAll(async () => {
      await kubectl(['-n', ns, 'delete', 'etcdcluster', '--all', '--wait=true', '--timeout=180s']);
      await s3?.remove();
    });

    it('backs up to the S3 server and to a claim, each file hashing to its recorded sha256', async () => {
      await apply([
        backup('vault-s3', s3Destination),
        backup('vault-pvc', { persistentVolumeClaim: { claimName: 'backups', directory: 'etcd' } }),
      ]);
      const inBucket = (await waitForBackup(ns, 'vault-s3')).status;
      expect(inBucket?.location).toBe(`s3://${bucket}/e2e/${inBucket?.key ?? ''}`);
      expect(inBucket?.sha256).toMatch(/^[0-9a-f]{64}$/);
      // The object as the server keeps it: the database, then etcd's 32-byte sha256 trailer.
      expect(await s3.objectSha256(bucket, `e2e/${inBucket?.key ?? ''}`, 32)).toBe(inBucket?.sha256);

      const inClaim = (await waitForBackup(ns, 'vault-pvc')).status;
      expect(inClaim?.location).toMatch(/^pvc:\/\/backups\//);
      const read = await runClientPod({
        namespace: ns,
        name: 'backup-reader',
        image: operandImages.etcd,
        runAsUser: 65532,
        claim: { name: 'backups', mountPath: '/backups' },
        // The file as the claim keeps it: location is pvc://<claim>/<path in the volume>.
        command: [
          'bash',
          '-c',
          'set -o pipefail; head -c -32 "$1" | sha256sum',
          'read',
          `/backups/${inClaim?.location?.replace(/^pvc:\/\/backups\//, '') ?? ''}`,
        ],
      });
      expect(read.phase, read.logs).toBe('Succeeded');
      expect(read.logs.split(' ')[0]).toBe(inClaim?.sha256);
      expect(inClaim?.sizeBytes).toBe(inBucket?.sizeBytes);
    });

    // The two restores run side by side: each makes and deletes a cluster of its own from a backup
    // the test before made, and neither reads the other's (seven members at most with the source).
    it.concurrent(
      'restores the S3 backup into a new cluster: every key and hashKV equal, the source untouched',
      async () => {
        const sourceBefore = (await getEtcdCluster(ns, name))?.status;
        const started = Date.now();
        await apply([restoredCluster('vault-copy', 'vault-s3')]);
        const restored = (await waitForMembers(ns, 'vault-copy', 3)).status;
        console.error(
          `etcd e2e: a three-member cluster restored from an S3 backup in ${secondsSince(started)} s`,
        );
        expect(restored?.clusterId).not.toBe(sourceBefore?.clusterId);
        await expectSameDataAsSource('vault-copy', 3);
        const sourceAfter = (await getEtcdCluster(ns, name))?.status;
        expect(sourceAfter?.clusterId).toBe(sourceBefore?.clusterId);
        expect(sourceAfter?.members?.map((m) => m.id)).toEqual(sourceBefore?.members?.map((m) => m.id));
        expect(await clusterEventReasons(ns, 'vault-copy')).toContain('RestoreStarted');
        await kubectl(['-n', ns, 'delete', 'etcdcluster', 'vault-copy', '--wait=true', '--timeout=120s']);
      },
    );

    it.concurrent(
      'restores the claim backup into a new cluster, the file checked by a pod first: every key and hashKV equal',
      async () => {
        const started = Date.now();
        await apply([restoredCluster('vault-claim', 'vault-pvc', 1)]);
        await waitForMembers(ns, 'vault-claim', 1);
        console.error(
          `etcd e2e: a one-member cluster restored from a backup in a claim in ${secondsSince(started)} s`,
        );
        await expectSameDataAsSource('vault-claim', 1);
        // The restoring pod, or the one made again without the restore once the member was a healthy
        // voter (the restore then lives on in the MemberRecreated Event only).
        const pod = await getObject<V1Pod>('pod', 'vault-claim-0', ns);
        if (pod?.spec?.initContainers?.length) {
          expect(pod.spec.initContainers.map((c) => c.name)).toEqual([
            'copy-backup',
            'restore',
            'finish-restore',
          ]);
        } else {
          expect(await clusterEventReasons(ns, 'vault-claim')).toContain('MemberRecreated');
        }
        await kubectl(['-n', ns, 'delete', 'etcdcluster', 'vault-claim', '--wait=true', '--timeout=120s']);
      },
    );

    it('proves the newest backup with a restore drill on request: BackupVerified True, its HashKV as recorded, the source untouched', async () => {
      // A backup newer than the claim's: the drill restores the newest Succeeded one.
      await apply([backup('vault-drilled', s3Destination)]);
      const recorded = (await waitForBackup(ns, 'vault-drilled')).status;
      expect(recorded?.hashKV).toMatch(/^[0-9]+$/);
      const before = (await getEtcdCluster(ns, name))?.status;
      const keysBefore = await memberKeyValues(ns, `${name}-0`);
      const started = Date.now();
      const after = (await requestBackupDrill(ns, name, 'e2e-1', 'True')).status;
      const verified = after?.lastVerifiedBackup;
      console.error(
        `etcd e2e: a restore drill of ${verified?.backup} answered ${secondsSince(started)} s after the request: restoreSeconds ${verified?.restoreSeconds}, recoveryPointSeconds ${verified?.recoveryPointSeconds}`,
      );
      expect(verified).toMatchObject({
        backup: 'vault-drilled',
        restorePoint: recorded?.finishedAt,
        revision: recorded?.revision,
        hashKV: recorded?.hashKV,
      });
      expect(verified?.restoreSeconds).toBeGreaterThan(0);
      expect(verified?.recoveryPointSeconds).toBeGreaterThanOrEqual(0);
      expect(after?.conditions?.find((c) => c.type === 'BackupVerified')).toMatchObject({
        status: 'True',
        reason: 'BackupRestored',
      });
      expect(await clusterEventReasons(ns, name)).toEqual(
        expect.arrayContaining(['BackupDrillStarted', 'BackupVerified']),
      );
      // Its pod and claim are gone; the cluster's members, identity and keys are as they were.
      await waitUntil(
        'the drill claim deleted',
        async () => (await listObjects('persistentvolumeclaims', ns, drillSelector(name))).length === 0,
        { timeoutMs: 120_000, intervalMs: 1000 },
      );
      expect(after?.clusterId).toBe(before?.clusterId);
      expect(after?.members?.map((m) => m.id)).toEqual(before?.members?.map((m) => m.id));
      expect(await memberKeyValues(ns, `${name}-0`)).toBe(keysBefore);
      await waitForMembers(ns, name, 3);
    });

    it('fails the next drill with SnapshotCorrupt once a byte of its backup is flipped in the bucket, the last proof kept', async () => {
      // A new backup, so the next drill takes it (the newest never drilled), with a byte flipped.
      await apply([backup('vault-flipped', s3Destination)]);
      const key = `e2e/${(await waitForBackup(ns, 'vault-flipped')).status?.key ?? ''}`;
      const proven = (await getEtcdCluster(ns, name))?.status?.lastVerifiedBackup;
      await s3.flipByte(bucket, key);
      const after = (await requestBackupDrill(ns, name, 'e2e-2', 'False')).status;
      const verified = after?.conditions?.find((c) => c.type === 'BackupVerified');
      expect(verified?.reason, verified?.message).toBe('SnapshotCorrupt');
      expect(verified?.message).toContain('vault-flipped');
      expect(after?.lastVerifiedBackup).toEqual(proven);
      // The verdict is on the backup too.
      expect((await waitForBackup(ns, 'vault-flipped')).status?.verification).toMatchObject({
        result: 'Failed',
        reason: 'SnapshotCorrupt',
      });
      expect(await clusterEventReasons(ns, name)).toContain('BackupVerificationFailed');
      await waitUntil(
        'the drill claim deleted',
        async () => (await listObjects('persistentvolumeclaims', ns, drillSelector(name))).length === 0,
        { timeoutMs: 120_000, intervalMs: 1000 },
      );
      await waitForMembers(ns, name, 3);
    });

    it('refuses a backup with one byte flipped in the bucket: BackupCorrupt, nothing created', async () => {
      const key = `e2e/${(await waitForBackup(ns, 'vault-s3')).status?.key ?? ''}`;
      const shaBefore = await s3.objectSha256(bucket, key);
      await s3.flipByte(bucket, key);
      expect(await s3.objectSha256(bucket, key)).not.toBe(shaBefore);
      await apply([restoredCluster('vault-bad', 'vault-s3')]);
      let conditions: { type: string; status: string; reason: string; message: string }[] = [];
      await waitUntil(
        'vault-bad refused with BackupCorrupt',
        async () => {
          conditions = (await getEtcdCluster(ns, 'vault-bad'))?.status?.conditions ?? [];
          return conditions.some((c) => c.type === 'Restoring' && c.reason === 'BackupCorrupt');
        },
        { timeoutMs: 120_000, intervalMs: 1000, describe: () => JSON.stringify(conditions) },
      );
      expect(conditions.find((c) => c.type === 'Degraded')).toMatchObject({
        status: 'True',
        reason: 'BackupCorrupt',
      });
      expect(await clusterEventReasons(ns, 'vault-bad')).toContain('BackupCorrupt');
      expect(await listObjects('pods', ns, memberSelector('vault-bad'))).toEqual([]);
      expect(await listObjects('persistentvolumeclaims', ns, memberSelector('vault-bad'))).toEqual([]);
      await kubectl(['-n', ns, 'delete', 'etcdcluster', 'vault-bad', '--wait=true', '--timeout=120s']);
    });
    it('recovers a cluster whose majority lost its pods and data from its newest backup, in a claim, with that backup’s keys', async () => {
      const phoenix = 'phoenix';
      // The least the API server takes: nothing here comes back by itself, so a longer wait would
      // only be waited out (RecoveryScheduled still comes first).
      const afterSeconds = 10;
      await apply([
        {
          apiVersion: 'v1',
          kind: 'PersistentVolumeClaim',
          metadata: { name: 'phoenix-backups', namespace: ns },
          spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
        },
        {
          ...etcdCluster(ns, phoenix, 3),
          spec: {
            ...etcdCluster(ns, phoenix, 3).spec,
            backup: { destination: s3Destination },
            recovery: { onQuorumLoss: 'RestoreNewestBackup', afterSeconds },
          },
        },
      ]);
      const before = (await waitForMembers(ns, phoenix, 3)).status;
      const phoenixBackup = (backupName: string, destination?: object) => ({
        apiVersion: 'etcd.homeostat.dev/v1alpha1',
        kind: 'EtcdBackup',
        metadata: { name: backupName, namespace: ns },
        spec: { clusterName: phoenix, ...(destination ? { destination } : {}) },
      });
      await putKeys(`${phoenix}-0`, 'p', 10);
      // An older backup in the bucket, then the newest in a claim of its own: recovery takes the newest.
      await apply([phoenixBackup('phoenix-backup')]);
      await waitForBackup(ns, 'phoenix-backup');
      await putKeys(`${phoenix}-0`, 'p', 20, 10);
      await apply([
        phoenixBackup('phoenix-claim-backup', {
          persistentVolumeClaim: { claimName: 'phoenix-backups', directory: 'etcd' },
        }),
      ]);
      await waitForBackup(ns, 'phoenix-claim-backup');
      const backedUp = await memberKeyValues(ns, `${phoenix}-0`);
      // Written after the backup: lost with the majority.
      await putKeys(`${phoenix}-0`, 'late', 5);

      // Two of three members lost with their volumes, as one failure: the operator is scaled to
      // zero meanwhile, so that it does not replace the first one lost while the other two still
      // have quorum (a minority loss, healed without a backup).
      const scaleOperator = (replicas: number) =>
        kubectl(['-n', ns, 'scale', 'deployment', '-l', operatorSelector, `--replicas=${replicas}`]);
      await scaleOperator(0);
      await waitUntil('the operator stopped', async () => (await operatorPods()).length === 0, {
        timeoutMs: 120_000,
        intervalMs: 1000,
      });
      const started = Date.now();
      // One kubectl: the claims finish deleting once their pods are gone.
      await kubectl([
        '-n',
        ns,
        'delete',
        `pod/${phoenix}-1`,
        `pod/${phoenix}-2`,
        `pvc/${phoenix}-1-data`,
        `pvc/${phoenix}-2-data`,
        '--wait=true',
      ]);
      await scaleOperator(1);
      await waitUntil(
        `${phoenix} recovered from its backup`,
        async () => (await getEtcdCluster(ns, phoenix))?.status?.recovery?.phase === 'Recovered',
        { timeoutMs: 420_000, intervalMs: 1000 },
      );
      const recoveredAt = Date.now();
      const after = (await waitForMembers(ns, phoenix, 3)).status;
      const recovery = after?.recovery;
      console.error(
        `etcd e2e: ${phoenix} lost 2 of 3 members with their data; answering again from its backup ${secondsSince(started)} s later (${((recoveredAt - started) / 1000).toFixed(1)} s to Recovered, of which ${((Date.parse(recovery?.finishedAt ?? '') - Date.parse(recovery?.startedAt ?? '')) / 1000).toFixed(0)} s restoring after the ${afterSeconds} s wait), 3 members Ready`,
      );
      expect(recovery).toMatchObject({
        phase: 'Recovered',
        generation: 1,
        backupName: 'phoenix-claim-backup',
      });
      expect(after?.clusterId).not.toBe(before?.clusterId);
      for (const member of after?.members ?? [])
        expect(await memberKeyValues(ns, member.name), member.name).toBe(backedUp);
      // Member 0 copied the file from the claim (checked by a pod first).
      // (Or its pod was made again without the restore once every member was a healthy voter.)
      const first = await getObject<V1Pod>('pod', `${phoenix}-0`, ns);
      if (first?.spec?.initContainers?.length) {
        expect(first.spec.initContainers[0]?.name).toBe('copy-backup');
      } else {
        expect(await clusterEventReasons(ns, phoenix)).toContain('MemberRecreated');
      }
      expect(await clusterEventReasons(ns, phoenix)).toEqual(
        expect.arrayContaining([
          'QuorumLost',
          'RecoveryScheduled',
          'RecoveryStarted',
          'RestoreStarted',
          'RecoveryCompleted',
        ]),
      );
      await kubectl(['-n', ns, 'delete', 'etcdcluster', phoenix, '--wait=true', '--timeout=120s']);
    });
  });

  describe('a cluster upgraded from etcd 3.6 to 3.7', () => {
    const name = 'ledger';

    const setVersion = (version: string) =>
      kubectl([
        '-n',
        ns,
        'patch',
        'etcdcluster',
        name,
        '--type=merge',
        '-p',
        JSON.stringify({ spec: { version } }),
      ]);

    /** The upgrade's Events (reason and member), each with its seconds since `started`. */
    async function upgradeTimeline(started: number): Promise<string> {
      const events = await listObjects<{
        reason: string;
        note?: string;
        eventTime?: string;
        regarding?: { name: string; kind: string };
      }>('events.events.k8s.io', ns);
      return events
        .filter(
          (e) =>
            e.regarding?.kind === 'EtcdCluster' &&
            e.regarding.name === name &&
            (e.reason === 'MemberUpgrading' || e.reason === 'LeadershipMoved'),
        )
        .map((e) => ({
          at: Date.parse(e.eventTime ?? ''),
          what: `${e.reason} ${e.note?.split(' ')[e.reason === 'LeadershipMoved' ? 3 : 1] ?? ''}`,
        }))
        .sort((a, b) => a.at - b.at)
        .map((e) => `${((e.at - started) / 1000).toFixed(1)} s ${e.what}`)
        .join(', ');
    }

    it('rolls one member at a time, each on 3.7 and healthy before the next; a downgrade is refused', async () => {
      const from = '3.6.16';
      const to = '3.7.3';
      await apply([
        { ...etcdCluster(ns, name, 3), spec: { ...etcdCluster(ns, name, 3).spec, version: from } },
      ]);
      const before = (await waitForMembers(ns, name, 3, { version: from })).status;
      expect(before?.currentVersion).toBe(from);
      await putKeys(`${name}-0`, 'l', 20);
      const ids = before?.members?.map((m) => m.id);

      const started = Date.now();
      // While it rolls, how many member pods are Ready at the worst moment, and which were not, and
      // the Events' times: printed, not asserted. The operator restarts one member at a time and
      // hands leadership to an upgraded member before restarting the leader (etcd's MoveLeader), so
      // no election runs with a member down. Runs on the shared local cluster once saw 1 of 3: the
      // next member restarted 1.3-1.5 s after the previous one's new container started, which
      // (restart count 1) then reported not Ready; the operator now waits until a restarted
      // container has run two readiness periods (minRunningMs) and is Ready before the next.
      let fewestReady = 3;
      let worstMoment = '';
      let worstAt = 0;
      let rolling = true;
      const watcher = (async () => {
        while (rolling) {
          const pods = await listObjects<V1Pod>('pods', ns, memberSelector(name)).catch(() => []);
          const ready = pods.filter(isPodReady).length;
          if (pods.length === 3 && ready < fewestReady) {
            fewestReady = ready;
            // Which pods, and what their etcd container was doing, at that moment.
            worstMoment = pods
              .filter((p) => !isPodReady(p))
              .map((p) => {
                const etcd = p.status?.containerStatuses?.find((c) => c.name === 'etcd');
                const state = Object.keys(etcd?.state ?? {})[0] ?? '?';
                const since = etcd?.state?.running?.startedAt;
                const startedIn = since
                  ? `started ${((Date.parse(String(since)) - started) / 1000).toFixed(0)} s in, `
                  : '';
                return `${p.metadata?.name ?? ''} (${state}, ${startedIn}${etcd?.image?.split(':').at(-1) ?? '?'}, ready ${String(etcd?.ready)}, restarts ${etcd?.restartCount ?? '?'})`;
              })
              .join(', ');
            worstAt = Date.now() - started;
          }
          await sleep(500);
        }
      })();
      let after;
      try {
        await setVersion(to);
        after = (await waitForMembers(ns, name, 3, { version: to })).status;
      } finally {
        rolling = false;
        await watcher;
      }
      console.error(
        `etcd e2e: ${name} upgraded ${from} → ${to} (3 members) in ${secondsSince(started)} s, ` +
          `at worst ${fewestReady} of 3 member pods Ready` +
          (worstMoment ? ` (${(worstAt / 1000).toFixed(1)} s in, not Ready: ${worstMoment})` : ''),
      );
      console.error(`etcd e2e: ${name} upgrade events: ${await upgradeTimeline(started)}`);
      expect(after?.currentVersion).toBe(to);
      // Same members (upgraded in place, data kept), each answering with the new version.
      expect(after?.members?.map((m) => m.id)).toEqual(ids);
      for (const member of after?.members ?? []) {
        const status = JSON.parse(
          await memberEtcdctl(ns, member.name, ['endpoint', 'status', '-w', 'json']),
        ) as {
          Status: { version: string };
        }[];
        expect(status[0]?.Status.version, member.name).toBe(to);
      }
      await expectKeysOnEveryMember(name, 'l', 20);
      expect(await clusterEventReasons(ns, name)).toEqual(
        expect.arrayContaining(['MemberUpgrading', 'LeadershipMoved']),
      );
      // etcd moves its cluster version to 3.7 once every member runs it; from then on the way back
      // is closed, and the API server says so once the operator has recorded it.
      await waitUntil(
        `${name}: cluster version 3.7.0 recorded`,
        async () => (await getEtcdCluster(ns, name))?.status?.clusterVersion === '3.7.0',
        { timeoutMs: 60_000, intervalMs: 1000 },
      );
      await expect(setVersion(from)).rejects.toThrow(
        /cannot downgrade from 3.7.3 to 3.6.16: etcd 3.7 cannot go back to 3.6 once the cluster version is 3.7/,
      );
      await kubectl(['-n', ns, 'delete', 'etcdcluster', name, '--wait=true', '--timeout=120s']);
    });
  });
});
