import { describe, expect, it } from 'vitest';
import { parseConninfo } from './conninfo.ts';
import { withUpstreamTls } from './upstream-tls.ts';

const onTls = parseConninfo(
  "host='a' user='r' sslmode='verify-full' sslrootcert='/etc/tls/ca.crt' application_name='x-1'",
);
const beforeTls = parseConninfo("host='a' user='r' application_name='x-1'");

describe('withUpstreamTls', () => {
  it('verifies a TLS upstream against the CA file the entrypoint named', () => {
    const plain = withUpstreamTls(onTls, 'plaintext');
    expect(withUpstreamTls(plain, 'tls').get('sslmode')).toBe('verify-full');
    expect(withUpstreamTls(plain, 'tls').get('sslrootcert')).toBe('/etc/tls/ca.crt');
  });

  it('speaks plaintext only to an upstream whose pod serves no TLS, keeping where the CA is', () => {
    const plain = withUpstreamTls(onTls, 'plaintext');
    expect(plain.get('sslmode')).toBe('disable');
    expect(plain.get('sslrootcert')).toBe('/etc/tls/ca.crt');
  });

  it('still encrypts toward a TLS upstream from a pod that has no CA to verify with', () => {
    expect(withUpstreamTls(beforeTls, 'tls').get('sslmode')).toBe('require');
  });

  it('never lets the network choose (prefer, allow)', () => {
    for (const current of [onTls, beforeTls, parseConninfo("host='a' sslmode='prefer'")]) {
      for (const upstream of ['tls', 'plaintext'] as const) {
        expect(['verify-full', 'require', 'disable']).toContain(
          withUpstreamTls(current, upstream).get('sslmode'),
        );
      }
    }
  });

  it('changes nothing else', () => {
    const next = withUpstreamTls(onTls, 'tls');
    expect([...next]).toEqual([...onTls]);
  });
});
