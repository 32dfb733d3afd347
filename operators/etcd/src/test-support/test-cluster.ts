// An EtcdCluster as the API server returns it (every default filled in), for unit tests of the
// pure builders: no API server needed to build one.
import type {
  EtcdCluster,
  EtcdClusterSpecFields,
  EtcdClusterStatusFields,
} from '../api/etcd-cluster-types.ts';

/** The spec of `spec: {}` after the API server's defaults, with TLS off. */
export const defaultedSpec: EtcdClusterSpecFields = {
  size: 3,
  version: '3.6.16',
  storage: { size: '8Gi', retention: 'Delete' },
  scheduling: { spread: { policy: 'Preferred', topologyKey: 'kubernetes.io/hostname' } },
  tls: { enabled: false },
  defragmentation: { fragmentationPercent: 50, minimumDbSizeMiB: 100 },
  paused: false,
};

/** The EtcdCluster `orders` in namespace `shop`, generation 4, with `spec` over the defaults. */
export function testCluster(
  spec: Partial<EtcdClusterSpecFields> = {},
  status?: EtcdClusterStatusFields,
): EtcdCluster {
  return {
    apiVersion: 'etcd.homeostat.dev/v1alpha1',
    kind: 'EtcdCluster',
    metadata: { name: 'orders', namespace: 'shop', uid: 'uid-1', generation: 4 },
    spec: { ...defaultedSpec, ...spec },
    ...(status ? { status } : {}),
  };
}
