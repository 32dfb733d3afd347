// The Memcached operator's Grafana dashboard: per cache, what the on-call engineer asks first (are
// its pods ready, does it answer, does it hit, is it full and evicting), above the operator's own
// panels. Pods desired and ready are the operator's gauges (src/metrics/cache-gauges.ts: label
// `cache`, listed by the dashboard's cache variable); the rest is each pod's metrics sidecar
// (operators/memcached/exporter), scraped through the chart's cachesServiceMonitor, whose series
// carry the Memcached's name as `service` and the sidecar as `container="exporter"`.
import type { OperatorDashboard } from '@homeostat/operator-kit/chart';

/** The operator's gauges of the caches the namespace and cache variables pick. */
const gauges = '{job="$job", namespace=~"$namespace", cache=~"$cluster"}';
/** The sidecars' series of the same caches (their own scrape job, one per Memcached Service). */
const sidecars = '{container="exporter", namespace=~"$namespace", service=~"$cluster"}';
const rate = (metric: string, extra = '') =>
  `rate(${metric}${extra ? sidecars.replace('}', `, ${extra}}`) : sidecars}[$__rate_interval])`;
const byCache = 'sum by (namespace, service)';

export const memcachedDashboard: OperatorDashboard = {
  title: 'Homeostat / Memcached operator',
  uid: 'homeostat-memcached-operator',
  controller: 'memcached',
  clusterMetric: 'memcached_cache_pods_desired',
  clusterLabel: 'cache',
  rows: [
    {
      title: 'Caches',
      panels: [
        {
          title: 'Pods ready',
          description:
            'Pods ready to serve and the pods spec.size asks for. Ready below desired for long: the keys hashed to the missing servers miss (alert MemcachedPodsNotReady).',
          kind: 'timeseries',
          queries: [
            { expr: `memcached_cache_pods_ready${gauges}`, legend: '{{namespace}}/{{cache}} ready' },
            { expr: `memcached_cache_pods_desired${gauges}`, legend: '{{namespace}}/{{cache}} desired' },
          ],
          unit: 'short',
        },
        {
          title: 'memcached answering, per pod',
          description:
            'Whether the sidecar reaches the memcached in its pod (1) or not (0): a pod at 0 for minutes is down for every client (alert MemcachedNotAnswering).',
          kind: 'timeseries',
          queries: [{ expr: `memcached_up${sidecars}`, legend: '{{namespace}}/{{pod}}' }],
          unit: 'short',
        },
        {
          title: 'Get hit ratio',
          description:
            'Gets that found their key, per cache. A drop right after a scale or a restart is the keys that moved or were emptied; a lasting drop means the working set does not fit.',
          kind: 'timeseries',
          queries: [
            {
              expr: `${byCache} (${rate('memcached_commands_total', 'command="get", status="hit"')}) / ${byCache} (${rate('memcached_commands_total', 'command="get"')})`,
              legend: '{{namespace}}/{{service}}',
            },
          ],
          unit: 'percentunit',
        },
        {
          title: 'Memory used, per pod',
          description:
            'Bytes stored against the item memory (spec.memoryLimitMB). Near 100 %: memcached makes room by evicting.',
          kind: 'timeseries',
          queries: [
            {
              expr: `memcached_current_bytes${sidecars} / memcached_limit_bytes${sidecars}`,
              legend: '{{namespace}}/{{pod}}',
            },
          ],
          unit: 'percentunit',
        },
        {
          title: 'Evictions per second',
          description:
            'Valid items evicted to make room, per cache. More than one per ten sets for long: raise spec.memoryLimitMB or spec.size (alert MemcachedEvictionsHigh).',
          kind: 'timeseries',
          queries: [
            {
              expr: `${byCache} (${rate('memcached_items_evicted_total')})`,
              legend: '{{namespace}}/{{service}}',
            },
          ],
          unit: 'ops',
        },
        {
          title: 'Client connections, per pod',
          description: 'Open client connections (the sidecar’s own included).',
          kind: 'timeseries',
          queries: [{ expr: `memcached_current_connections${sidecars}`, legend: '{{namespace}}/{{pod}}' }],
          unit: 'short',
        },
      ],
    },
  ],
};
