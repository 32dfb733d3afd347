// The etcd operator's own settings on top of the common ones (tested in libs/operator-kit).
import { describe, expect, it } from 'vitest';
import { ConfigError } from '@homeostat/operator-kit';
import { readConfig, usage } from './operator-config.ts';

describe('operator configuration', () => {
  it("defaults: etcd's own image repository and cluster.local, next to the common settings", () => {
    expect(readConfig([], { POD_NAMESPACE: 'ops', POD_NAME: 'op-1' })).toMatchObject({
      leaderElection: { namespace: 'ops', leaseName: 'etcd-operator' },
      podName: 'op-1',
      etcdImageRepository: 'gcr.io/etcd-development/etcd',
      clusterDomain: 'cluster.local',
    });
  });

  it('reads flags before their environment variables', () => {
    const env = { LEADER_ELECT: 'false', ETCD_IMAGE_REPOSITORY: 'env/etcd', CLUSTER_DOMAIN: 'env.example' };
    expect(
      readConfig(['--etcd-image-repository=mirror/etcd', '--cluster-domain=corp.example'], env),
    ).toMatchObject({
      etcdImageRepository: 'mirror/etcd',
      clusterDomain: 'corp.example',
    });
    expect(readConfig([], env)).toMatchObject({
      etcdImageRepository: 'env/etcd',
      clusterDomain: 'env.example',
    });
  });

  it('refuses an empty repository and lists both flags in the usage', () => {
    expect(() => readConfig(['--etcd-image-repository=', '--leader-elect=false'], {})).toThrow(ConfigError);
    expect(usage).toContain('--etcd-image-repository');
    expect(usage).toContain('--cluster-domain');
  });
});
