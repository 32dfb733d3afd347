// The Service in front of one Memcached's pods.
import type { V1Service } from '@kubernetes/client-node';
import { exporterPort } from '../api/memcached-schema.ts';
import { exporterRuns } from './desired-statefulset.ts';
import type { Memcached } from '../api/memcached-types.ts';
import { ownedObjectMeta, selectorLabels } from './operand-labels.ts';

/**
 * A headless Service: its DNS name resolves to every ready pod, which is what memcached clients
 * need to spread keys over the servers themselves (a virtual IP would hide the shards).
 */
export function desiredService(memcached: Memcached): V1Service {
  const name = memcached.metadata?.name ?? '';
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: ownedObjectMeta(memcached),
    spec: {
      clusterIP: 'None',
      selector: selectorLabels(name),
      ports: [
        { name: 'memcached', port: memcached.spec.port, targetPort: 'memcached', protocol: 'TCP' },
        ...(exporterRuns(memcached)
          ? [{ name: 'metrics', port: exporterPort, targetPort: 'metrics', protocol: 'TCP' }]
          : []),
      ],
    },
  };
}
