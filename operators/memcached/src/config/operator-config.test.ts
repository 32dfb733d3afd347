// The Memcached operator's own setting on top of the common ones (tested in libs/operator-kit).
import { describe, expect, it } from 'vitest';
import { ConfigError } from '@homeostat/operator-kit';
import { readConfig, usage } from './operator-config.ts';
import { defaultMemcachedExporterImage, defaultMemcachedImage } from './default-image.ts';

describe('operator configuration', () => {
  it('defaults: all namespaces, leader election on, probes on 8081, metrics on 8080, the default memcached and exporter images', () => {
    expect(readConfig([], { POD_NAMESPACE: 'ops', POD_NAME: 'op-1' })).toEqual({
      watchNamespaces: [],
      leaderElection: { namespace: 'ops', leaseName: 'memcached-operator' },
      podName: 'op-1',
      healthPort: 8081,
      metricsPort: 8080,
      memcachedImage: defaultMemcachedImage,
      memcachedExporterImage: defaultMemcachedExporterImage,
      maxConcurrentReconciles: 2,
      logLevel: 'info',
    });
  });

  it('reads --memcached-image before MEMCACHED_IMAGE, next to the common flags', () => {
    const config = readConfig(
      ['--watch-namespaces', 'a, b', '--leader-elect=false', '--memcached-image=x/memcached:2'],
      { WATCH_NAMESPACES: 'c', MEMCACHED_IMAGE: 'y', METRICS_PORT: '9090' },
    );
    expect(config).toMatchObject({
      watchNamespaces: ['a', 'b'],
      leaderElection: undefined,
      memcachedImage: 'x/memcached:2',
      metricsPort: 9090,
    });
    expect(readConfig([], { MEMCACHED_IMAGE: 'y/memcached:3', LEADER_ELECT: 'false' }).memcachedImage).toBe(
      'y/memcached:3',
    );
  });

  it('refuses an empty image and lists its flag in the usage', () => {
    expect(() => readConfig(['--memcached-image=', '--leader-elect=false'], {})).toThrow(ConfigError);
    expect(() => readConfig(['--memcached-image= ', '--leader-elect=false'], {})).toThrow(
      /--memcached-image/,
    );
    expect(usage).toMatch(
      /--memcached-image ref +image of Memcacheds that name none; default \S+ \[MEMCACHED_IMAGE\]/,
    );
    expect(usage).toMatch(
      /--memcached-exporter-image ref +image of the metrics sidecar .*\[MEMCACHED_EXPORTER_IMAGE\]/,
    );
  });
});
