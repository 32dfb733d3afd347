// The Services in front of a cluster's instances.
import type { V1Service } from '@kubernetes/client-node';
import type { PostgresCluster } from '../api/postgres-cluster-types.ts';
import { postgresPort, serviceNames } from './cluster-names.ts';
import { clusterSelector, labelKeys, ownedObjectMeta } from './operand-labels.ts';

function service(
  cluster: PostgresCluster,
  name: string,
  selector: Record<string, string>,
  extra: Partial<NonNullable<V1Service['spec']>> = {},
): V1Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: ownedObjectMeta(cluster, name),
    spec: {
      selector,
      ports: [{ name: 'postgresql', port: postgresPort, targetPort: 'postgresql', protocol: 'TCP' }],
      ...extra,
    },
  };
}

/**
 * -rw: the primary only (the role label the operator sets once the instance is promoted and the
 * old one fenced); -ro: the replicas; -r: any routed instance (either role), so an instance the
 * operator unroutes (fenced, quiesced, rejoining) leaves every client Service; -instances:
 * headless, every pod ready or not, for the DNS names the operator and the replicas reach each
 * instance by. It keeps a fenced one on purpose: the fence is proven by asking the instance itself
 * at that name whether it still answers, which a name that no longer resolves would answer falsely.
 */
export function desiredServices(cluster: PostgresCluster): V1Service[] {
  const name = cluster.metadata?.name ?? '';
  const names = serviceNames(name);
  const selector = clusterSelector(name);
  return [
    service(cluster, names.readWrite, { ...selector, [labelKeys.role]: 'primary' }),
    service(cluster, names.readOnly, { ...selector, [labelKeys.role]: 'replica' }),
    service(cluster, names.any, { ...selector, [labelKeys.routed]: 'true' }),
    service(cluster, names.instances, selector, { clusterIP: 'None', publishNotReadyAddresses: true }),
  ];
}
