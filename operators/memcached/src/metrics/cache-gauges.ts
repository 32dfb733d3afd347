// The operator's own gauges per Memcached, beside controller-runtime's in the manager's registry:
// pods asked for and pods ready, what the "pods missing" alerts compare. Every other figure of a
// cache is per pod, from its metrics sidecar. Labels are the Memcached's namespace and name only,
// so series stay bounded by the number of caches; a deleted Memcached's series are dropped.
import { Gauge, type Registry } from '@homeostat/reconcile';
import type { Memcached, MemcachedStatusFields } from '../api/memcached-types.ts';

const labelNames = ['namespace', 'cache'] as const;
type Labels = Record<(typeof labelNames)[number], string>;

export class CacheGauges {
  readonly #desired: Gauge;
  readonly #ready: Gauge;

  constructor(registry: Registry) {
    const registers = [registry];
    this.#desired = new Gauge({
      name: 'memcached_cache_pods_desired',
      help: 'Pods the Memcached spec asks for (spec.size)',
      labelNames,
      registers,
    });
    this.#ready = new Gauge({
      name: 'memcached_cache_pods_ready',
      help: 'Pods of the Memcached that are ready to serve (status.readyReplicas)',
      labelNames,
      registers,
    });
  }

  /** Records what one reconcile reported of `memcached`. */
  observe(memcached: Memcached, status: MemcachedStatusFields): void {
    const labels = labelsOf(memcached.metadata?.namespace ?? 'default', memcached.metadata?.name ?? '');
    this.#desired.set(labels, memcached.spec.size);
    this.#ready.set(labels, status.readyReplicas ?? 0);
  }

  /** Drops the series of a Memcached that no longer exists (or is being deleted). */
  forget(key: { namespace: string; name: string }): void {
    const labels = labelsOf(key.namespace, key.name);
    this.#desired.remove(labels);
    this.#ready.remove(labels);
  }
}

const labelsOf = (namespace: string, cache: string): Labels => ({ namespace, cache });
