import { describe, expect, it } from 'vitest';
import type { Memcached, MemcachedSpecFields } from '../api/memcached-types.ts';
import { defaultedSpec } from '../test-support/memcached-fixtures.ts';
import { desiredServersConfigMap, memcachedServers, serverAddresses } from './memcached-servers.ts';

const cache = (spec: Partial<MemcachedSpecFields>): Memcached => ({
  apiVersion: 'cache.homeostat.dev/v1alpha1',
  kind: 'Memcached',
  metadata: { name: 'sessions', namespace: 'shop', uid: 'u-1' },
  spec: defaultedSpec(spec),
});

describe('the published server list', () => {
  it('names each ordinal through the headless Service, in ordinal order, without the cluster domain', () => {
    expect(memcachedServers(cache({ size: 3, port: 11311 }))).toEqual([
      'sessions-0.sessions.shop.svc:11311',
      'sessions-1.sessions.shop.svc:11311',
      'sessions-2.sessions.shop.svc:11311',
    ]);
  });

  it('only adds or removes the last address when the size changes', () => {
    const three = serverAddresses({ name: 'c', namespace: 'n', port: 11211, size: 3 });
    const four = serverAddresses({ name: 'c', namespace: 'n', port: 11211, size: 4 });
    expect(four.slice(0, 3)).toEqual(three);
    expect(serverAddresses({ name: 'c', namespace: 'n', port: 11211, size: 0 })).toEqual([]);
  });

  it('goes into the <name>-servers ConfigMap, owned by the Memcached, in two forms', () => {
    const configMap = desiredServersConfigMap(cache({ size: 2 }));
    expect(configMap.metadata).toMatchObject({
      name: 'sessions-servers',
      namespace: 'shop',
      ownerReferences: [expect.objectContaining({ uid: 'u-1', controller: true })],
    });
    expect(configMap.data).toEqual({
      servers: 'sessions-0.sessions.shop.svc:11211,sessions-1.sessions.shop.svc:11211',
      'servers.json': '["sessions-0.sessions.shop.svc:11211","sessions-1.sessions.shop.svc:11211"]',
    });
  });
});
