// The init container's script, linted as the POSIX sh it runs under (the memcached image's /bin/sh
// may be dash); its behaviour is tested with the real saslpasswd2 and memcached in
// memcached-tls-sasl.memcached.integration.test.ts.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { saslDatabaseScript } from './sasl-database.ts';

describe('the SASL database script', () => {
  it('passes shellcheck as POSIX sh', () => {
    const result = spawnSync('shellcheck', ['--shell=sh', '-'], {
      input: saslDatabaseScript,
      encoding: 'utf8',
    });
    expect(result.error).toBeUndefined();
    expect(result.stdout).toBe('');
    expect(result.status).toBe(0);
  });
});
