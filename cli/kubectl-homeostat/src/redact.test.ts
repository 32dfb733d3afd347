import { describe, expect, it } from 'vitest';
import { redact } from './redact.ts';

describe('redact (the support bundle carries no credential)', () => {
  it.each([
    [
      'a connection URI',
      'uri postgresql://accounts:s3cr3t%21@accounts-rw.shop.svc:5432/accounts',
      'postgresql://accounts:[REDACTED]@accounts-rw',
    ],
    ['SQL', `CREATE ROLE "postgres" WITH SUPERUSER LOGIN PASSWORD 'hunter2'`, `PASSWORD [REDACTED]`],
    ['key=value', 'PGPASSWORD=hunter2 psql', 'PGPASSWORD=[REDACTED] psql'],
    ['YAML', 'repo1-s3-key-secret: abcdEFGH', 'repo1-s3-key-secret: [REDACTED]'],
    ['JSON', '{"password":"x\\"y"}', '{"password":"[REDACTED]"}'],
    ['an environment entry', '{"name":"PG_PASSWORD","value":"hunter2"}', '"value":"[REDACTED]"'],
    ['JSON in a string', '"{\\"token\\":\\"abcdEFGH\\"}"', '\\"token\\":\\"[REDACTED]\\"'],
    ['a bearer token', 'Authorization: Bearer eyJhbGciOi.abc.def', 'Bearer [REDACTED]'],
    [
      'a private key',
      '-----BEGIN EC PRIVATE KEY-----\nMHcCAQEE\n-----END EC PRIVATE KEY-----',
      '[REDACTED PRIVATE KEY]',
    ],
  ])('%s', (_, text, expected) => {
    const redacted = redact(text);
    expect(redacted).toContain(expected);
    for (const secret of ['s3cr3t', 'hunter2', 'abcdEFGH', 'eyJhbGciOi', 'MHcCAQEE', 'x\\"y'])
      expect(redacted).not.toContain(secret);
  });

  it('leaves ordinary text alone', () => {
    const line =
      'accounts-1 is streaming from accounts-0 at 0/3000060 (lag 0 bytes); secretName: accounts-app';
    expect(redact(line)).toBe(line);
    expect(redact('{"secretKeyRef":{"name":"accounts-app","key":"password"}}')).toContain(
      '"name":"accounts-app"',
    );
  });
});
