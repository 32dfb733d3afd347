// Member addresses on loopback for tests: each member of each cluster gets its own free ports, so
// real etcd processes for many members run side by side on one machine, and the pods the
// operator writes carry these URLs in their flags (ADR 0301).
import { freeLoopbackPort } from '@homeostat/testing';
import type { EtcdCluster } from '../api/etcd-cluster-types.ts';
import { nameOf, namespaceOf } from '../controllers/cluster-names.ts';
import { schemeOf, type MemberAddressing } from '../controllers/member-addressing.ts';

interface Ports {
  readonly peer: number;
  readonly client: number;
  readonly metrics: number;
}

/** Loopback addressing that remembers each member's ports for the life of the test file. */
export function loopbackAddressing(): MemberAddressing {
  const allocated = new Map<string, Promise<Ports>>();
  // Each port is this process's alone until it ends (freeLoopbackPort reserves it).
  const port = freeLoopbackPort;
  const portsOf = (cluster: EtcdCluster, member: string): Promise<Ports> => {
    const key = `${namespaceOf(cluster)}/${nameOf(cluster)}/${member}`;
    let ports = allocated.get(key);
    if (!ports) {
      ports = (async () => ({ peer: await port(), client: await port(), metrics: await port() }))();
      allocated.set(key, ports);
    }
    return ports;
  };
  const url = (cluster: EtcdCluster, port: number) => `${schemeOf(cluster)}://127.0.0.1:${port}`;
  return {
    async urls(cluster, member) {
      const ports = await portsOf(cluster, member);
      return { peerUrl: url(cluster, ports.peer), clientUrl: url(cluster, ports.client) };
    },
    async listen(cluster, member) {
      const ports = await portsOf(cluster, member);
      return {
        peer: url(cluster, ports.peer),
        client: url(cluster, ports.client),
        metrics: `http://127.0.0.1:${ports.metrics}`,
      };
    },
    clientEndpoint(cluster) {
      return `loopback://${namespaceOf(cluster)}/${nameOf(cluster)}`;
    },
    certificateNames() {
      return { dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] };
    },
  };
}
