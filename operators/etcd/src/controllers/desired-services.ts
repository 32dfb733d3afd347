// The two Services of an EtcdCluster: a headless one that names every member (peers, and metrics
// scraping per member), and the one clients connect to.
import type { V1Service } from '@kubernetes/client-node';
import type { EtcdCluster } from '../api/etcd-cluster-types.ts';
import {
  clientPort,
  clientServiceName,
  metricsPort,
  nameOf,
  ownedMeta,
  peerPort,
  peerServiceName,
  selectorLabels,
} from './cluster-names.ts';

/**
 * Headless, and publishing members that are not ready: a member must resolve before it is ready,
 * or a joining learner could never be reached by the leader to catch up.
 */
export function desiredPeerService(cluster: EtcdCluster): V1Service {
  const name = nameOf(cluster);
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: ownedMeta(cluster, peerServiceName(name)),
    spec: {
      clusterIP: 'None',
      publishNotReadyAddresses: true,
      selector: selectorLabels(name),
      ports: [
        { name: 'peer', port: peerPort, targetPort: 'peer', protocol: 'TCP' },
        { name: 'client', port: clientPort, targetPort: 'client', protocol: 'TCP' },
        { name: 'metrics', port: metricsPort, targetPort: 'metrics', protocol: 'TCP' },
      ],
    },
  };
}

/** The client Service: a virtual IP in front of the ready members. */
export function desiredClientService(cluster: EtcdCluster): V1Service {
  const name = nameOf(cluster);
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: ownedMeta(cluster, clientServiceName(name)),
    spec: {
      type: 'ClusterIP',
      selector: selectorLabels(name),
      ports: [{ name: 'client', port: clientPort, targetPort: 'client', protocol: 'TCP' }],
    },
  };
}
