// Where members are reached and where they listen. In a cluster: DNS names under the peers Service
// and every interface in the pod. Tests substitute loopback ports (ADR 0301), so the same
// controller drives real etcd processes on one machine.
import type { EtcdCluster } from '../api/etcd-cluster-types.ts';
import {
  clientPort,
  clientServiceName,
  metricsPort,
  nameOf,
  namespaceOf,
  peerPort,
  peerServiceName,
} from './cluster-names.ts';

/** The URLs a member advertises: peers and clients reach it there. */
export interface MemberUrls {
  readonly peerUrl: string;
  readonly clientUrl: string;
}

/** Where a member's etcd listens, inside its pod. */
export interface MemberListen {
  readonly peer: string;
  readonly client: string;
  /** Plain HTTP: /metrics, /livez, /readyz. */
  readonly metrics: string;
}

export interface MemberAddressing {
  urls(cluster: EtcdCluster, member: string): Promise<MemberUrls>;
  listen(cluster: EtcdCluster, member: string): Promise<MemberListen>;
  /** The URL clients use (status.clientEndpoint). */
  clientEndpoint(cluster: EtcdCluster): string;
  /** Names the members' certificates must carry for every URL above to verify. */
  certificateNames(cluster: EtcdCluster): CertificateNames;
}

export interface CertificateNames {
  readonly dnsNames: readonly string[];
  readonly ipAddresses: readonly string[];
}

export const schemeOf = (cluster: EtcdCluster): 'https' | 'http' =>
  cluster.spec.tls.enabled ? 'https' : 'http';

/** DNS names in a Kubernetes cluster whose DNS domain is `clusterDomain` (usually cluster.local). */
export function dnsAddressing(clusterDomain: string): MemberAddressing {
  const host = (cluster: EtcdCluster, member: string) =>
    `${member}.${peerServiceName(nameOf(cluster))}.${namespaceOf(cluster)}.svc.${clusterDomain}`;
  return {
    async urls(cluster, member) {
      const scheme = schemeOf(cluster);
      return {
        peerUrl: `${scheme}://${host(cluster, member)}:${peerPort}`,
        clientUrl: `${scheme}://${host(cluster, member)}:${clientPort}`,
      };
    },
    async listen(cluster) {
      const scheme = schemeOf(cluster);
      return {
        peer: `${scheme}://0.0.0.0:${peerPort}`,
        client: `${scheme}://0.0.0.0:${clientPort}`,
        metrics: `http://0.0.0.0:${metricsPort}`,
      };
    },
    clientEndpoint(cluster) {
      const service = `${clientServiceName(nameOf(cluster))}.${namespaceOf(cluster)}.svc.${clusterDomain}`;
      return `${schemeOf(cluster)}://${service}:${clientPort}`;
    },
    certificateNames(cluster) {
      const namespace = namespaceOf(cluster);
      const peers = `${peerServiceName(nameOf(cluster))}.${namespace}.svc`;
      const client = clientServiceName(nameOf(cluster));
      return {
        // Every member under the peers Service, the client Service by each of its names, and
        // localhost for etcdctl inside a member's pod.
        dnsNames: [
          `*.${peers}`,
          `*.${peers}.${clusterDomain}`,
          client,
          `${client}.${namespace}`,
          `${client}.${namespace}.svc`,
          `${client}.${namespace}.svc.${clusterDomain}`,
          'localhost',
        ],
        ipAddresses: ['127.0.0.1'],
      };
    },
  };
}
