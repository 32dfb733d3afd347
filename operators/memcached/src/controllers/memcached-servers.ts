// The ordered server list a Memcached publishes (status.servers and the <name>-servers ConfigMap):
// one stable address per StatefulSet ordinal, so a client's consistent-hashing ring keyed by these
// strings keeps every other server's keys when the highest ordinal comes or goes (ADR 0404).
import type { V1ConfigMap } from '@kubernetes/client-node';
import type { Memcached } from '../api/memcached-types.ts';
import { ownedObjectMeta } from './operand-labels.ts';

/** Where one cache's servers are: what its name, namespace, port and size determine. */
export interface ServerSet {
  readonly name: string;
  readonly namespace: string;
  readonly port: number;
  readonly size: number;
}

/**
 * `<name>-<i>.<name>.<namespace>.svc:<port>` for i in 0 … size-1, in ordinal order: the pod's DNS
 * name through the headless Service of the same name. Without the cluster domain, so the same list
 * holds on every cluster; a pod's resolver completes it from its search path.
 */
export function serverAddresses({ name, namespace, port, size }: ServerSet): string[] {
  return Array.from({ length: size }, (_, i) => `${name}-${i}.${name}.${namespace}.svc:${port}`);
}

/** The server list of `memcached` as its spec asks for it (every ordinal, ready or not). */
export function memcachedServers(memcached: Memcached): string[] {
  return serverAddresses({
    name: memcached.metadata?.name ?? '',
    namespace: memcached.metadata?.namespace ?? 'default',
    port: memcached.spec.port,
    size: memcached.spec.size,
  });
}

/** Name of the ConfigMap that carries the server list. */
export const serversConfigMapName = (name: string): string => `${name}-servers`;

/**
 * The ConfigMap applications mount or read into an environment variable: `servers` comma-separated
 * (the form most client libraries take in one string), `servers.json` a JSON array.
 */
export function desiredServersConfigMap(memcached: Memcached): V1ConfigMap {
  const servers = memcachedServers(memcached);
  const meta = ownedObjectMeta(memcached);
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { ...meta, name: serversConfigMapName(meta.name) },
    data: { servers: servers.join(','), 'servers.json': JSON.stringify(servers) },
  };
}
