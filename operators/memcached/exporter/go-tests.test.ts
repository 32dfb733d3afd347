// The exporter's own Go tests (robustness_test.go: a misbehaving memcached on loopback; sasl_test.go:
// the SASL and binary-protocol path against fake servers), run with the Go toolchain the binaries
// are built with, so that `npm test` runs them too.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

describe('memcached exporter: go test against fake memcached servers on loopback', () => {
  it('passes', () => {
    const output = execFileSync('go', ['test', '-count=1', '.'], {
      cwd: fileURLToPath(new URL('.', import.meta.url)),
      env: { ...process.env, CGO_ENABLED: '0', GOFLAGS: '-mod=readonly' },
      encoding: 'utf8',
      timeout: 300_000,
    });
    expect(output).toMatch(/^ok\s/m);
  });
});
