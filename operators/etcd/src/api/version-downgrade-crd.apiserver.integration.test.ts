// The EtcdCluster CRD's rule for going back to an older etcd minor, on a real kube-apiserver: allowed
// only while status.clusterVersion (etcd's cluster version, recorded by the operator) still names
// the target's minor, with a message that says why when it is not. No operator runs here.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installCrds } from '@homeostat/testing';
import { sharedKubeConfig } from '@homeostat/testing/shared';
import { builtin, KubeClient, resourceType, type KubeObject } from '@homeostat/reconcile';
import { version } from './api-group.ts';
import { etcdClusterCrdFor } from './etcd-cluster-crd.ts';

interface Written extends KubeObject {
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
}

// More versions than the operator ships, in a group of its own, so every kind of step can be tried.
const group = 'downgrades.etcd.homeostat.dev';
const versions = ['3.5.21', '3.6.10', '3.6.16', '3.7.2', '3.8.0'];
const clusters = resourceType<Written>(`${group}/${version}`, 'EtcdCluster', 'etcdclusters');

const kubeConfig = sharedKubeConfig();
const namespace = `etcd-downgrade-crd-${process.pid}`;
const client = new KubeClient(kubeConfig, { fieldManager: 'test-user' });

async function refusal(action: () => Promise<unknown>): Promise<string> {
  try {
    await action();
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
  throw new Error('the API server accepted it');
}

const setVersion = (name: string, to: string) =>
  client.patch(clusters, name, namespace, { spec: { version: to } });
const recordClusterVersion = (name: string, clusterVersion: string) =>
  client.patchStatus(clusters, name, namespace, { clusterVersion });
const versionOf = async (name: string) => (await client.get(clusters, name, namespace)).spec?.['version'];

describe('going back to an older etcd minor, on a real kube-apiserver', () => {
  beforeAll(async () => {
    await installCrds(kubeConfig, [etcdClusterCrdFor(group, versions)]);
    await client.create(builtin.namespaces, { metadata: { name: namespace } });
  });

  afterAll(async () => {
    await client.delete(builtin.namespaces, namespace).catch(() => undefined);
    client.close();
  });

  it('goes back a minor while the cluster version is still that minor (an upgrade not finished)', async () => {
    await client.create(clusters, { metadata: { name: 'halfway', namespace }, spec: { version: '3.6.16' } });
    await recordClusterVersion('halfway', '3.6.0');
    await setVersion('halfway', '3.7.2');
    // A member crash-loops on 3.7: the cluster version stays 3.6, so 3.6 can come back, any patch of it.
    await setVersion('halfway', '3.6.10');
    expect(await versionOf('halfway')).toBe('3.6.10');
    await setVersion('halfway', '3.7.2');
    await setVersion('halfway', '3.6.16');
    expect(await versionOf('halfway')).toBe('3.6.16');
  });

  it('refuses once the cluster version has moved, naming both minors and the way out', async () => {
    await client.create(clusters, {
      metadata: { name: 'committed', namespace },
      spec: { version: '3.6.16' },
    });
    await setVersion('committed', '3.7.2');
    await recordClusterVersion('committed', '3.7.0');
    expect(await refusal(() => setVersion('committed', '3.6.16'))).toContain(
      'spec.version: Forbidden: cannot downgrade from 3.7.2 to 3.6.16: etcd 3.7 cannot go back to 3.6 once the cluster version is 3.7 (status.clusterVersion 3.7.0): every member has run it and the data may already be in a form 3.6 cannot read; restore a backup into a new cluster running 3.6.16 instead',
    );
    expect(await versionOf('committed')).toBe('3.7.2');
  });

  it('refuses two minors back though the cluster version is one back, and any minor back before one is recorded', async () => {
    await client.create(clusters, { metadata: { name: 'far', namespace }, spec: { version: '3.7.2' } });
    expect(await refusal(() => setVersion('far', '3.6.16'))).toContain(
      'spec.version: Forbidden: cannot downgrade from 3.7.2 to 3.6.16: no cluster version is recorded yet (status.clusterVersion)',
    );
    await recordClusterVersion('far', '3.7.0');
    await setVersion('far', '3.8.0');
    expect(await refusal(() => setVersion('far', '3.6.16'))).toContain(
      'cannot downgrade from 3.8.0 to 3.6.16: etcd 3.7 cannot go back to 3.6 once the cluster version is 3.7',
    );
    await setVersion('far', '3.7.2');
    expect(await versionOf('far')).toBe('3.7.2');
  });

  it('allows a patch of the same minor either way, with or without a recorded cluster version', async () => {
    await client.create(clusters, { metadata: { name: 'patch', namespace }, spec: { version: '3.6.16' } });
    await setVersion('patch', '3.6.10');
    await setVersion('patch', '3.6.16');
    await recordClusterVersion('patch', '3.6.0');
    await setVersion('patch', '3.6.10');
    expect(await versionOf('patch')).toBe('3.6.10');
  });
});
