// The EtcdCluster and EtcdBackup CRDs on a real kube-apiserver: what defaults fill in, and what a
// person reads when the API server refuses a spec (OpenAPI checks and CEL rules, transition rules
// with oldSelf included). No operator runs here: this is the API alone.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installCrds } from '@homeostat/testing';
import { sharedKubeConfig } from '@homeostat/testing/shared';
import { builtin, KubeClient, resourceType, type KubeObject } from '@homeostat/reconcile';
import { version } from './api-group.ts';
import { etcdBackupCrd } from './etcd-backup-crd.ts';
import { etcdBackups } from './etcd-backup-types.ts';
import { etcdClusterCrd, etcdClusterCrdFor } from './etcd-cluster-crd.ts';
import { etcdClusters } from './etcd-cluster-types.ts';
import { defaultVersion, supportedVersions } from './etcd-versions.ts';

/** Objects as a user may write them, valid or not: the API server is the judge here. */
interface Written extends KubeObject {
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
}

// The upgrade rules need more versions than the operator ships today: the same CRD, built for a
// longer list, in a group of its own.
const versionsGroup = 'versions.etcd.homeostat.dev';
const manyVersions = ['3.5.21', '3.6.16', '3.7.2', '3.8.0'];
const clusters = resourceType<Written>(`${etcdClusters.apiVersion}`, 'EtcdCluster', 'etcdclusters');
const versionedClusters = resourceType<Written>(`${versionsGroup}/${version}`, 'EtcdCluster', 'etcdclusters');
const backups = resourceType<Written>(etcdBackups.apiVersion, 'EtcdBackup', 'etcdbackups');

const kubeConfig = sharedKubeConfig();
const namespace = `etcd-api-${process.pid}`;
const client = new KubeClient(kubeConfig, { fieldManager: 'test-user' });

/** Creates an object and returns the API server's refusal, or fails the test if it was accepted. */
async function refusal(action: () => Promise<unknown>): Promise<string> {
  try {
    await action();
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
  throw new Error('the API server accepted it');
}

const cluster = (name: string, spec?: Record<string, unknown>): Written => ({
  metadata: { name, namespace },
  ...(spec ? { spec } : {}),
});

const s3 = { bucket: 'backups', credentialsSecretName: 's3-credentials' };

describe('EtcdCluster and EtcdBackup CRDs on a real kube-apiserver', () => {
  beforeAll(async () => {
    await installCrds(kubeConfig, [
      etcdClusterCrd,
      etcdBackupCrd,
      etcdClusterCrdFor(versionsGroup, manyVersions),
    ]);
    await client.create(builtin.namespaces, { metadata: { name: namespace } });
  });

  afterAll(async () => {
    await client.delete(builtin.namespaces, namespace).catch(() => undefined);
    client.close();
  });

  it('fills in the defaults of an empty spec: three members, the newest version, TLS, spreading, defragmentation', async () => {
    const created = await client.create(clusters, cluster('defaults', {}));
    expect(created.spec).toEqual({
      size: 3,
      version: defaultVersion,
      storage: { size: '8Gi', retention: 'Delete' },
      scheduling: { spread: { policy: 'Preferred', topologyKey: 'kubernetes.io/hostname' } },
      tls: { enabled: true },
      defragmentation: { fragmentationPercent: 50, minimumDbSizeMiB: 100 },
      paused: false,
    });
    expect(defaultVersion).toBe(supportedVersions.at(-1));
  });

  it('refuses an even size with a sentence about quorum, and sizes out of 1..7', async () => {
    expect(await refusal(() => client.create(clusters, cluster('even', { size: 4 })))).toContain(
      'spec.size: Invalid value: 4: size must be odd (1, 3, 5 or 7): etcd needs a majority of members to agree on every write, so an even size survives no more failures than the odd size below it',
    );
    expect(await refusal(() => client.create(clusters, cluster('zero', { size: 0 })))).toContain(
      'spec.size in body should be greater than or equal to 1',
    );
    expect(await refusal(() => client.create(clusters, cluster('nine', { size: 9 })))).toContain(
      'spec.size in body should be less than or equal to 7',
    );
  });

  it('refuses an even size through the scale subresource (kubectl scale) too', async () => {
    await client.create(clusters, cluster('scaled', { size: 1 }));
    expect(
      await refusal(() =>
        client.patch(clusters, 'scaled', namespace, { spec: { replicas: 2 } }, { subresource: 'scale' }),
      ),
    ).toContain('spec.size: Invalid value: 2: size must be odd (1, 3, 5 or 7)');
    await client.patch(clusters, 'scaled', namespace, { spec: { replicas: 3 } }, { subresource: 'scale' });
    expect((await client.get(clusters, 'scaled', namespace)).spec?.['size']).toBe(3);
  });

  it('refuses a version this operator ships no image for, listing the ones it does', async () => {
    expect(await refusal(() => client.create(clusters, cluster('unknown', { version: '3.4.0' })))).toContain(
      `spec.version: Unsupported value: "3.4.0": supported values: ${supportedVersions.map((v) => `"${v}"`).join(', ')}`,
    );
  });

  it('allows an upgrade of one minor version, refuses a downgrade and a skipped minor with the reason', async () => {
    await client.create(versionedClusters, cluster('upgraded', { version: '3.6.16' }));
    const setVersion = (name: string, to: string) =>
      client.patch(versionedClusters, name, namespace, { spec: { version: to } });

    expect(await refusal(() => setVersion('upgraded', '3.5.21'))).toContain(
      'spec.version: Forbidden: cannot downgrade from 3.6.16 to 3.5.21: no cluster version is recorded yet (status.clusterVersion)',
    );
    expect(await refusal(() => setVersion('upgraded', '3.8.0'))).toContain(
      'spec.version: Forbidden: cannot upgrade from 3.6.16 to 3.8.0 at once: etcd upgrades one minor version at a time',
    );
    await setVersion('upgraded', '3.7.2');
    expect((await client.get(versionedClusters, 'upgraded', namespace)).spec?.['version']).toBe('3.7.2');

    // The members still run 3.6: a second step before the first has rolled out is refused.
    await client.patchStatus(versionedClusters, 'upgraded', namespace, { currentVersion: '3.6.16' });
    expect(await refusal(() => setVersion('upgraded', '3.8.0'))).toContain(
      'spec.version: Forbidden: spec.version is more than one minor version ahead of what the members run (status.currentVersion)',
    );
    await client.patchStatus(versionedClusters, 'upgraded', namespace, { currentVersion: '3.7.2' });
    await setVersion('upgraded', '3.8.0');
  });

  it('keeps storage, TLS and bootstrap as they were created, saying why', async () => {
    await client.create(
      clusters,
      cluster('fixed', {
        size: 1,
        storage: { size: '2Gi', storageClassName: 'fast' },
        bootstrap: { fromBackup: { backupName: 'nightly' } },
      }),
    );
    const patch = (spec: Record<string, unknown>) => client.patch(clusters, 'fixed', namespace, { spec });
    expect(await refusal(() => patch({ storage: { size: '1Gi' } }))).toContain(
      'spec.storage.size: Invalid value: storage.size cannot shrink: a PersistentVolumeClaim can only grow',
    );
    expect(await refusal(() => patch({ storage: { storageClassName: 'slow' } }))).toContain(
      'storage.storageClassName cannot change',
    );
    expect(await refusal(() => patch({ tls: { enabled: false } }))).toContain(
      'spec.tls.enabled: Forbidden: tls.enabled cannot change on an existing cluster: every peer URL would change',
    );
    expect(await refusal(() => patch({ bootstrap: null }))).toContain(
      'spec.bootstrap: Forbidden: bootstrap cannot change: it applies only when the cluster is created',
    );
    await patch({ storage: { size: '4Gi' } }); // growing is fine
  });

  it('refuses malformed storage, resources, schedules, destinations and names with readable messages', async () => {
    const create = (name: string, spec: Record<string, unknown>) => () =>
      client.create(clusters, cluster(name, spec));
    expect(await refusal(create('tiny', { storage: { size: '100Mi' } }))).toContain(
      'storage.size must be larger than 256Mi',
    );
    const notQuantity = await refusal(create('notq', { storage: { size: 'lots' } }));
    expect(notQuantity).toContain(
      'spec.storage.size: Invalid value: "lots": must be a Kubernetes quantity such as 128Mi, 1Gi, 250m or 1',
    );
    // Said once: the rules comparing sizes skip a value that is no quantity.
    expect(notQuantity).not.toContain('evaluating rule');
    expect(
      await refusal(
        create('inverted', { resources: { requests: { memory: '1Gi' }, limits: { memory: '512Mi' } } }),
      ),
    ).toContain('resources.requests.memory must not be larger than resources.limits.memory');
    expect(
      await refusal(create('cron', { backup: { schedule: 'every night', destination: { s3 } } })),
    ).toContain('schedule must be a cron expression of five fields');
    expect(
      await refusal(
        create('twodest', { backup: { destination: { s3, persistentVolumeClaim: { claimName: 'b' } } } }),
      ),
    ).toContain('spec.backup.destination: Invalid value: set exactly one of s3 and persistentVolumeClaim');
    expect(await refusal(create('nodest', { backup: { destination: {} } }))).toContain(
      'set exactly one of s3 and persistentVolumeClaim',
    );
    expect(
      await refusal(
        create('escape', {
          backup: { destination: { persistentVolumeClaim: { claimName: 'b', directory: 'a/../..' } } },
        }),
      ),
    ).toContain('directory must not contain ".."');
    expect(
      await refusal(
        create('twosrc', {
          bootstrap: { fromBackup: { backupName: 'x', location: { destination: { s3 }, key: 'k' } } },
        }),
      ),
    ).toContain('bootstrap.fromBackup takes exactly one of backupName and location');
    expect(
      await refusal(
        create('provided', {
          tls: {
            enabled: false,
            provided: {
              serverSecretName: 'a',
              peerSecretName: 'b',
              clientSecretName: 'c',
            },
          },
        }),
      ),
    ).toContain('tls.provided needs tls.enabled: true');
    expect(await refusal(create('9lives', {}))).toContain(
      'metadata.name must be lowercase letters, digits and "-", starting with a letter',
    );
    expect(await refusal(create('x'.repeat(51), {}))).toContain(
      'metadata.name: Too long: may not be more than 50',
    );
    expect(await refusal(() => client.create(clusters, cluster('nospec')))).toContain(
      'spec: Required value: spec is required',
    );
  });

  it('accepts a complete spec as written', async () => {
    const created = await client.create(
      clusters,
      cluster('complete', {
        size: 5,
        storage: { size: '16Gi', storageClassName: 'fast', retention: 'Retain' },
        resources: { requests: { cpu: '500m', memory: '1Gi' }, limits: { memory: '2Gi' } },
        scheduling: {
          spread: { policy: 'Required', topologyKey: 'topology.kubernetes.io/zone' },
          nodeSelector: { disk: 'ssd' },
          tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'etcd', effect: 'NoSchedule' }],
          priorityClassName: 'system-cluster-critical',
        },
        tls: { provided: { serverSecretName: 'srv', peerSecretName: 'peer', clientSecretName: 'cli' } },
        backup: {
          schedule: '0 */6 * * *',
          keep: 10,
          destination: {
            s3: { ...s3, endpoint: 'http://minio.storage:9000', forcePathStyle: true, prefix: 'prod/' },
          },
        },
        paused: true,
      }),
    );
    expect(created.spec).toMatchObject({
      storage: { retention: 'Retain' },
      tls: { enabled: true },
      backup: { destination: { s3: { region: 'us-east-1', forcePathStyle: true } } },
    });
  });

  it('takes restore drills on a cron schedule with a default timeout, and refuses a bad schedule or timeout', async () => {
    const created = await client.create(
      clusters,
      cluster('drilled', { backup: { destination: { s3 }, verify: { schedule: '30 3 * * *' } } }),
    );
    expect(created.spec?.['backup']).toMatchObject({
      verify: { schedule: '30 3 * * *', timeoutSeconds: 1800 },
    });
    // On request only: no schedule.
    const onRequest = await client.create(
      clusters,
      cluster('on-request', { backup: { destination: { s3 }, verify: {} } }),
    );
    expect(onRequest.spec?.['backup']).toMatchObject({ verify: { timeoutSeconds: 1800 } });
    const create = (name: string, verify: Record<string, unknown>) => () =>
      client.create(clusters, cluster(name, { backup: { destination: { s3 }, verify } }));
    expect(await refusal(create('drill-cron', { schedule: 'nightly' }))).toContain(
      'verify.schedule must be a cron expression of five fields',
    );
    expect(await refusal(create('drill-short', { timeoutSeconds: 10 }))).toContain(
      'spec.backup.verify.timeoutSeconds: Invalid value: 10',
    );
    expect(await refusal(create('drill-long', { timeoutSeconds: 100_000 }))).toContain(
      'spec.backup.verify.timeoutSeconds: Invalid value: 100000',
    );
    // The status a drill writes is what the schema describes (the shared lastVerifiedBackup shape).
    const written = await client.patch(
      clusters,
      'drilled',
      namespace,
      {
        status: {
          lastVerifiedBackup: {
            backup: 'drilled-202611270300',
            restorePoint: '2026-11-27T03:00:04Z',
            verifiedAt: '2026-11-27T03:30:09Z',
            restoreSeconds: 5.2,
            recoveryPointSeconds: 1796,
            revision: '4711',
            hashKV: '3767145427',
          },
        },
      },
      { subresource: 'status' },
    );
    expect(written.status?.['lastVerifiedBackup']).toMatchObject({ restoreSeconds: 5.2, revision: '4711' });
    expect(
      await refusal(() =>
        client.patch(
          clusters,
          'drilled',
          namespace,
          { status: { lastVerifiedBackup: { backup: 'x', restoreSeconds: -1 } } },
          { subresource: 'status' },
        ),
      ),
    ).toContain('lastVerifiedBackup.restoreSeconds');
  });

  it('takes an EtcdBackup once: a cluster name and an optional destination, immutable after', async () => {
    const created = await client.create(backups, {
      metadata: { name: 'once', namespace },
      spec: { clusterName: 'main', destination: { persistentVolumeClaim: { claimName: 'backups' } } },
    });
    expect(created.spec).toEqual({
      clusterName: 'main',
      destination: { persistentVolumeClaim: { claimName: 'backups' } },
    });
    expect(
      await refusal(() => client.patch(backups, 'once', namespace, { spec: { clusterName: 'other' } })),
    ).toContain('spec: Forbidden: spec is immutable: a backup is taken once; create a new EtcdBackup');
    expect(
      await refusal(() => client.create(backups, { metadata: { name: 'nocluster', namespace }, spec: {} })),
    ).toContain('spec.clusterName: Required value');
  });
});
