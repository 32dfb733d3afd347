import { describe, expect, it } from 'vitest';
import { ConfigError, readConfig } from './operator-config.ts';
import { defaultMemcachedImage } from './default-image.ts';

describe('operator configuration', () => {
  it('defaults: all namespaces, leader election on, probes on 8081, metrics on 8080', () => {
    expect(readConfig([], { POD_NAMESPACE: 'ops', POD_NAME: 'op-1' })).toEqual({
      watchNamespaces: [],
      leaderElection: { namespace: 'ops', leaseName: 'memcached-operator' },
      podName: 'op-1',
      healthPort: 8081,
      metricsPort: 8080,
      memcachedImage: defaultMemcachedImage,
      maxConcurrentReconciles: 2,
      logLevel: 'info',
    });
  });

  it('reads flags before environment variables', () => {
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
  });

  it('falls back to the service account namespace for the Lease', () => {
    expect(readConfig([], {}, 'from-file').leaderElection?.namespace).toBe('from-file');
  });

  it('refuses what it cannot run with, naming the flag', () => {
    expect(() => readConfig([], {})).toThrow(/--leader-election-namespace or POD_NAMESPACE/);
    expect(() => readConfig(['--health-port=http'], { POD_NAMESPACE: 'x' })).toThrow(/--health-port/);
    expect(() => readConfig(['--leader-elect=maybe'], { POD_NAMESPACE: 'x' })).toThrow(ConfigError);
    expect(() => readConfig(['--nonsense'], {})).toThrow(/Unknown option '--nonsense'/);
  });
});
