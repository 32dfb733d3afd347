// The NetworkPolicy that admits only the clients spec.networkPolicy names to the memcached port.
import type { V1LabelSelector, V1NetworkPolicyPeer } from '@kubernetes/client-node';
import type { NetworkPolicy } from '@homeostat/reconcile';
import { exporterPort } from '../api/memcached-schema.ts';
import { exporterRuns } from './desired-statefulset.ts';
import type { Memcached } from '../api/memcached-types.ts';
import { ownedObjectMeta, selectorLabels } from './operand-labels.ts';

type Selector = NonNullable<
  NonNullable<Memcached['spec']['networkPolicy']>['clients'][number]['podSelector']
>;

// The schema's selector is meta/v1 LabelSelector with the operator narrowed to its four values.
const labelSelector = (selector: Selector): V1LabelSelector => ({
  ...(selector.matchLabels ? { matchLabels: { ...selector.matchLabels } } : {}),
  ...(selector.matchExpressions
    ? {
        matchExpressions: selector.matchExpressions.map((e) => ({
          key: e.key,
          operator: e.operator,
          ...(e.values ? { values: [...e.values] } : {}),
        })),
      }
    : {}),
});

/** The desired policy, or undefined when spec.networkPolicy is unset (then none is kept). */
export function desiredNetworkPolicy(memcached: Memcached): NetworkPolicy | undefined {
  const policy = memcached.spec.networkPolicy;
  if (!policy) return undefined;
  const name = memcached.metadata?.name ?? '';
  const from: V1NetworkPolicyPeer[] = policy.clients.map((client) => ({
    ...(client.podSelector ? { podSelector: labelSelector(client.podSelector) } : {}),
    ...(client.namespaceSelector ? { namespaceSelector: labelSelector(client.namespaceSelector) } : {}),
  }));
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: ownedObjectMeta(memcached),
    spec: {
      podSelector: { matchLabels: selectorLabels(name) },
      // Ingress only: the cache pods open no connections of their own worth restricting.
      policyTypes: ['Ingress'],
      ingress: [
        { from, ports: [{ protocol: 'TCP', port: memcached.spec.port }] },
        // The metrics port from anywhere: it serves counters, never the cache's keys or values,
        // and the scraper's pods are not the application's.
        ...(exporterRuns(memcached) ? [{ ports: [{ protocol: 'TCP', port: exporterPort }] }] : []),
      ],
    },
  };
}
