import { describe, expect, it } from 'vitest';
import { bundleImage } from './bundle-files.ts';

describe('bundleImage', () => {
  it('names the bundle after the operator image repository, tag or digest dropped', () => {
    expect(bundleImage('ghcr.io/homeostat/memcached-operator:0.1.0', '0.1.0')).toBe(
      'ghcr.io/homeostat/memcached-operator-bundle:0.1.0',
    );
    expect(bundleImage('localhost:5000/ops/etcd-operator@sha256:abc', '0.2.0')).toBe(
      'localhost:5000/ops/etcd-operator-bundle:0.2.0',
    );
  });
});
