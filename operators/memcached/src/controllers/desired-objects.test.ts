// The objects the operator builds for a Memcached, from specs the API server may hold: one stored
// before a rule existed included (review 6 found the port clash and the rollout spread).
import { describe, expect, it } from 'vitest';
import { exporterPort } from '../api/memcached-schema.ts';
import type { Memcached, MemcachedSpecFields } from '../api/memcached-types.ts';
import { defaultedSpec } from '../test-support/memcached-fixtures.ts';
import { desiredDeployment } from './desired-deployment.ts';
import { desiredNetworkPolicy } from './desired-network-policy.ts';
import { desiredService } from './desired-service.ts';

const images = { memcached: 'example.test/memcached:1', exporter: 'example.test/exporter:1' };
const cache = (spec: Partial<MemcachedSpecFields> = {}): Memcached => ({
  apiVersion: 'cache.homeostat.dev/v1alpha1',
  kind: 'Memcached',
  metadata: { name: 'sessions', namespace: 'shop', uid: 'u-1', generation: 1 },
  spec: defaultedSpec(spec),
});

describe('a Memcached on the metrics port (stored before the API server refused it)', () => {
  const clash = cache({
    port: exporterPort,
    networkPolicy: { clients: [{ podSelector: { matchLabels: { app: 'web' } } }] },
  });

  it('gets no sidecar: no two containers listen on one port', () => {
    const containers = desiredDeployment(clash, images).spec?.template.spec?.containers ?? [];
    expect(containers.map((c) => c.name)).toEqual(['memcached']);
  });

  it('gets a Service without a duplicate port', () => {
    expect(desiredService(clash).spec?.ports?.map((p) => `${p.name}:${p.port}`)).toEqual(['memcached:9150']);
  });

  it('never has the memcached port opened to every pod by the metrics rule', () => {
    const open = (desiredNetworkPolicy(clash)?.spec?.ingress ?? []).filter((rule) => !rule.from?.length);
    expect(open).toEqual([]);
  });
});

describe('topology spread of the Deployment', () => {
  it('spreads each ReplicaSet on its own (matchLabelKeys pod-template-hash), so a rollout is not counted twice', () => {
    const spread = desiredDeployment(
      cache({ spread: { policy: 'Required', topologyKey: 'topology.kubernetes.io/zone' } }),
      images,
    ).spec?.template.spec?.topologySpreadConstraints;
    expect(spread?.[0]?.matchLabelKeys).toEqual(['pod-template-hash']);
  });
});
