// The operator's check of the Secrets a Memcached names, against Secrets as the API server would
// return them (base64 data), without an API server.
import type { V1Secret } from '@kubernetes/client-node';
import type { KubeClient, KubeObject, ResourceType } from '@homeostat/reconcile';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Memcached } from '../api/memcached-types.ts';
import { defaultedSpec } from '../test-support/memcached-fixtures.ts';
import { tlsSecretData } from '../test-support/pod-memcached.ts';
import { checkReferencedSecrets } from './referenced-secrets.ts';

const b64 = (text: string) => Buffer.from(text).toString('base64');

const cache: Memcached = {
  apiVersion: 'cache.homeostat.dev/v1alpha1',
  kind: 'Memcached',
  metadata: { name: 'sessions', namespace: 'shop', uid: 'u-1', generation: 1 },
  spec: defaultedSpec({ sasl: { secretName: 'cache-sasl' } }),
};

/** A client whose only Secret is a SASL Secret with `data`. */
function holding(data: Record<string, string>, secretName = 'cache-sasl'): Pick<KubeClient, 'find'> {
  const secret: V1Secret = {
    metadata: { name: secretName, namespace: 'shop', uid: 's-1', resourceVersion: '7' },
    data,
  };
  return {
    find: <T extends KubeObject>(_type: ResourceType<T>, name: string) =>
      Promise.resolve(name === secretName ? (secret as T) : undefined),
  };
}

describe('checkReferencedSecrets on a SASL Secret', () => {
  it('accepts a username and a password written with a trailing newline', async () => {
    const check = await checkReferencedSecrets(
      cache,
      holding({ username: b64('shop\n'), password: b64('pw\n') }),
    );
    expect(check).toEqual({ ok: true, secrets: { tlsHasCa: false, revision: 'sasl=s-1/7' } });
  });

  it.each([
    {
      why: 'a username of newlines only: the init script would add an account with an empty name',
      data: { username: '\n\n', password: 'pw' },
      key: 'username',
    },
    {
      why: 'a password that is one newline: saslpasswd2 refuses it, and the rollout would take down old pods',
      data: { username: 'shop', password: '\n' },
      key: 'password',
    },
  ])('refuses $why', async ({ data, key }) => {
    const check = await checkReferencedSecrets(
      cache,
      holding({ username: b64(data.username), password: b64(data.password) }),
    );
    expect(check).toMatchObject({ ok: false, problem: { reason: 'SecretInvalid' } });
    expect(check.ok ? '' : check.problem.message).toContain(`has no ${key} (or an empty one)`);
  });

  it.each([' shop', 'shop ', 'shop\r\n', '\tshop'])(
    'refuses the username %j: Cyrus SASL trims whitespace at either end when a client logs in, not when the database is built',
    async (username) => {
      // saslpasswd2 stores the name as given; memcached looks up the trimmed one: nobody, the
      // sidecar included, could ever authenticate (shown on a real memcached, review 7).
      const check = await checkReferencedSecrets(
        cache,
        holding({ username: b64(username), password: b64('pw') }),
      );
      expect(check).toMatchObject({ ok: false, problem: { reason: 'SecretInvalid' } });
      expect(check.ok ? '' : check.problem.message).toContain('its username starts or ends with whitespace');
    },
  );

  it.each([
    { key: 'password', data: { username: 'shop', password: 'ab\0cd' } },
    { key: 'username', data: { username: 'sh\0op', password: 'pw' } },
  ])(
    'refuses a NUL byte in the $key (random bytes, say): SASL PLAIN separates its fields with NUL',
    async ({ key, data }) => {
      // saslpasswd2 stores a password up to its first NUL ("ab": shown on a real memcached).
      const check = await checkReferencedSecrets(
        cache,
        holding({ username: b64(data.username), password: b64(data.password) }),
      );
      expect(check).toMatchObject({ ok: false, problem: { reason: 'SecretInvalid' } });
      expect(check.ok ? '' : check.problem.message).toContain(`its ${key} holds a NUL byte`);
    },
  );

  it('refuses a password longer than saslpasswd2 keeps (2048 bytes), naming the limit, never the value', async () => {
    // saslpasswd2 -p stores the first 2048 bytes only and says nothing: clients sending the whole
    // password (the sidecar too) would be refused by every new pod.
    const long = 'p'.repeat(2049);
    const check = await checkReferencedSecrets(
      cache,
      holding({ username: b64('shop'), password: b64(`${long}\n`) }),
    );
    expect(check).toMatchObject({ ok: false, problem: { reason: 'SecretInvalid' } });
    const message = check.ok ? '' : check.problem.message;
    // Not its length: even that says something about the password.
    expect(message).toContain('password is longer than 2048 bytes');
    expect(message).not.toContain('2049');
    expect(message).not.toContain('ppp');
    const longest = await checkReferencedSecrets(
      cache,
      holding({ username: b64('shop'), password: b64(`${'p'.repeat(2048)}\n`) }),
    );
    expect(longest.ok).toBe(true);
  });
});

describe('checkReferencedSecrets on a TLS Secret', () => {
  const secured: Memcached = { ...cache, spec: defaultedSpec({ tls: { secretName: 'cache-tls' } }) };
  let valid: Record<string, string>;
  let other: Record<string, string>;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'homeostat-referenced-secrets-'));
    valid = await tlsSecretData(join(dir, 'valid'));
    other = await tlsSecretData(join(dir, 'other'));
  });

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const check = (data: Record<string, string>) => checkReferencedSecrets(secured, holding(data, 'cache-tls'));

  it('accepts a certificate, its key and a CA', async () => {
    expect(await check(valid)).toEqual({ ok: true, secrets: { tlsHasCa: true, revision: 'tls=s-1/7' } });
  });

  // memcached exits at start (status 64) on each of these: the new pods would crash while the
  // rollout takes old ones down (checked with memcached 1.6.18 -Z -o ssl_...).
  it.each([
    {
      why: 'a tls.key of another certificate',
      change: () => ({ 'tls.key': other['tls.key'] ?? '' }),
      says: 'its tls.key is not the key of the certificate in tls.crt',
    },
    {
      why: 'a tls.crt that is no PEM certificate',
      change: () => ({ 'tls.crt': b64('certificate') }),
      says: 'its tls.crt holds no PEM certificate',
    },
    {
      why: 'a tls.key that is no PEM key',
      change: () => ({ 'tls.key': b64('key') }),
      says: 'its tls.key holds no PEM private key',
    },
    {
      why: 'a ca.crt that is no PEM certificate',
      change: () => ({ 'ca.crt': b64('ca') }),
      says: 'its ca.crt holds no PEM certificate',
    },
  ])('refuses $why, naming the key, never its value', async ({ change, says }) => {
    const result = await check({ ...valid, ...change() });
    expect(result).toMatchObject({ ok: false, problem: { reason: 'SecretInvalid' } });
    const message = result.ok ? '' : result.problem.message;
    expect(message).toContain(says);
    expect(message).not.toContain('BEGIN');
  });
});
