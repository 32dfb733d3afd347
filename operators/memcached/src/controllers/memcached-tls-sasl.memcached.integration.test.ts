// A real memcached process started with exactly the arguments, environment and files the pod gets
// for spec.tls and spec.sasl (memcachedArgs, memcachedEnv, the init container's script run with the
// machine's saslpasswd2), and real clients: Node's tls, a plaintext socket, and memjs (SASL PLAIN
// over the binary protocol).
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect as connectTcp } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as connectTls } from 'node:tls';
import { promisify } from 'node:util';
import { Client } from 'memjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freeLoopbackPort, type ManagedProcess } from '@homeostat/testing';
import { textSession } from '../../../../bench/memcached/memcached-process.ts';
import type { MemcachedSpecFields } from '../api/memcached-types.ts';
import { defaultedSpec } from '../test-support/memcached-fixtures.ts';
import {
  preparePodFiles,
  runSaslDatabaseScript,
  startPodMemcached,
  writeSaslSecretFiles,
} from '../test-support/pod-memcached.ts';
import { statsAddress, type PodLayout } from './memcached-command.ts';
import { maxSaslPasswordBytes } from './referenced-secrets.ts';

const exec = promisify(execFile);

/** Sends `version` over TLS, trusting only `ca`; resolves with the answer's first line. */
function tlsVersion(port: number, ca: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connectTls(
      { host: '127.0.0.1', port, ca: readFileSync(ca), servername: 'localhost' },
      () => socket.write('version\r\n'),
    );
    socket.setEncoding('utf8');
    socket.once('data', (line: string) => {
      socket.end();
      resolve(line.trim());
    });
    socket.once('error', reject);
  });
}

/**
 * Sends a text-protocol command in plaintext; resolves with whatever came back before memcached
 * closed the connection or two seconds passed (memcached -S leaves such a connection unanswered).
 */
function plaintextAnswer(port: number, command: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = connectTcp({ host: '127.0.0.1', port }, () => socket.write(`${command}\r\n`));
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (answer += chunk));
    socket.once('error', () => undefined);
    socket.once('close', () => resolve(answer));
    socket.setTimeout(2_000, () => socket.destroy());
  });
}

describe('memcached -Z as the pod runs it (a real memcached, Node tls and plaintext clients)', () => {
  let dir: string;
  let layout: PodLayout;
  let spec: MemcachedSpecFields;
  let memcached: ManagedProcess;
  let caCert: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'homeostat-memcached-tls-'));
    ({ layout, caCert } = await preparePodFiles(dir));
    spec = defaultedSpec({
      port: await freeLoopbackPort(),
      memoryLimitMB: 16,
      tls: { secretName: 'cache-tls' },
    });
    memcached = await startPodMemcached(spec, layout, dir, true);
  });

  afterAll(async () => {
    await memcached?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers a TLS client that trusts the CA', async () => {
    expect(await tlsVersion(spec.port, caCert)).toMatch(/^VERSION 1\.6\.\d+$/);
  });

  it('refuses a TLS client that does not trust the CA: the certificate is what clients check', async () => {
    await expect(tlsVersion(spec.port, join(layout.tlsDir, 'tls.crt'))).rejects.toThrow(/certificate/);
  });

  it('never answers plaintext on its port', async () => {
    expect(await plaintextAnswer(spec.port, 'version')).not.toContain('VERSION');
  });

  it('listens on its port on every address, IPv4 and IPv6, as memcached does without -l', async () => {
    const listening = (await exec('ss', ['-Hltn', `sport = :${spec.port}`])).stdout;
    expect(
      listening
        .trim()
        .split('\n')
        .map((line) => line.split(/\s+/)[3])
        .sort(),
    ).toEqual([`0.0.0.0:${spec.port}`, `[::]:${spec.port}`]);
  });

  it("serves statistics in plaintext on the sidecar's loopback listener only", async () => {
    const address = statsAddress(spec, layout);
    expect(address).toBe(`127.0.0.1:${layout.statsPort}`);
    expect(await textSession(address, 'stats\r\n')).toMatch(/^STAT pid \d+\r\n/);
    const listening = (await exec('ss', ['-Hltn', `sport = :${layout.statsPort}`])).stdout;
    expect(
      listening
        .trim()
        .split('\n')
        .map((line) => line.split(/\s+/)[3]),
    ).toEqual([`127.0.0.1:${layout.statsPort}`]);
  });
});

describe('memcached -S as the pod runs it (the init script with saslpasswd2, a real memcached, memjs)', () => {
  const username = 'shop';
  const password = 'correct horse battery staple';
  let dir: string;
  let layout: PodLayout;
  let spec: MemcachedSpecFields;
  let memcached: ManagedProcess;
  let initOutput: string;
  const clients: Client[] = [];

  const client = (credentials: { username?: string; password?: string }, port = spec.port) => {
    const opened = Client.create(`127.0.0.1:${port}`, {
      ...credentials,
      retries: 1,
      timeout: 5,
      logger: { log: () => undefined },
    });
    clients.push(opened);
    return opened;
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'homeostat-memcached-sasl-'));
    // As `kubectl create secret generic --from-file` often stores it: with a trailing newline.
    ({ layout, initOutput } = await preparePodFiles(dir, { username, password: `${password}\n` }));
    spec = defaultedSpec({
      port: await freeLoopbackPort(),
      memoryLimitMB: 16,
      sasl: { secretName: 'cache-sasl' },
    });
    memcached = await startPodMemcached(spec, layout, dir);
  });

  afterAll(async () => {
    for (const opened of clients) opened.close();
    await memcached?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('builds the database without printing the password', () => {
    expect(initOutput).toContain(`SASL database written for user ${username}`);
    expect(initOutput).not.toContain('horse');
    expect(readFileSync(join(layout.saslDir, 'memcached.conf'), 'utf8')).toBe(
      `mech_list: plain\nsasldb_path: ${layout.saslDir}/sasldb\n`,
    );
  });

  it('stores and reads for a client with the Secret’s credentials (the trailing newline dropped)', async () => {
    const authenticated = client({ username, password });
    await authenticated.set('greeting', 'hello', {});
    expect((await authenticated.get('greeting')).value?.toString()).toBe('hello');
  });

  it('refuses a client with a wrong password', async () => {
    await expect(client({ username, password: 'wrong' }).get('greeting')).rejects.toBe(
      'Memcached server authentication failed!',
    );
  });

  it('refuses a client without credentials, and the text protocol altogether', async () => {
    await expect(client({}).get('greeting')).rejects.toBe('Memcached server authentication failed!');
    expect(await plaintextAnswer(spec.port, 'get greeting')).toBe('');
  });

  it('builds the database for a username that starts with "-": a user, not an option of saslpasswd2', async () => {
    const other = join(dir, 'dash-user');
    mkdirSync(other);
    writeSaslSecretFiles(join(other, 'secret'), '-d', password);
    const sasl = { ...layout, saslCredentialsDir: join(other, 'secret'), saslDir: other };
    expect(await runSaslDatabaseScript(sasl)).toContain('SASL database written for user -d');
    const { stdout } = await exec('sasldblistusers2', ['-f', join(other, 'sasldb')], {
      env: { PATH: `${process.env['PATH'] ?? ''}:/usr/sbin:/sbin` },
    });
    expect(stdout).toMatch(/^-d@\S+: userPassword$/m);
  });

  it('runs again over its own files (a recreated pod sandbox reruns init containers) and keeps only the Secret’s user', async () => {
    const rerun = join(dir, 'rerun');
    mkdirSync(rerun);
    const secret = writeSaslSecretFiles(join(rerun, 'secret'), 'before', password);
    const sasl = { ...layout, saslCredentialsDir: secret, saslDir: rerun };
    await runSaslDatabaseScript(sasl);
    // Rotated since: the rerun must not leave the old account behind.
    writeFileSync(join(secret, 'username'), 'after');
    expect(await runSaslDatabaseScript(sasl)).toContain('SASL database written for user after');
    const { stdout } = await exec('sasldblistusers2', ['-f', join(rerun, 'sasldb')], {
      env: { PATH: `${process.env['PATH'] ?? ''}:/usr/sbin:/sbin` },
    });
    expect(
      stdout
        .trim()
        .split('\n')
        .map((line) => line.split('@')[0]),
    ).toEqual(['after']);
  });

  /**
   * Runs `check` against a second memcached whose database the init script built from a Secret
   * with `secret`'s values (in `<dir>/<name>`), stopping it afterwards.
   */
  async function withOwnSecret(
    name: string,
    secret: { username: string; password: string },
    check: (port: number) => Promise<void>,
  ): Promise<void> {
    const own = join(dir, name);
    mkdirSync(own);
    const credentials = writeSaslSecretFiles(join(own, 'secret'), secret.username, secret.password);
    const sasl: PodLayout = { ...layout, saslCredentialsDir: credentials, saslDir: own };
    await runSaslDatabaseScript(sasl);
    const port = await freeLoopbackPort();
    const started = await startPodMemcached(
      defaultedSpec({ port, memoryLimitMB: 16, sasl: { secretName: 'cache-sasl' } }),
      sasl,
      own,
    );
    try {
      await check(port);
    } finally {
      await started.stop();
    }
  }

  const refused = 'Memcached server authentication failed!';

  it(`keeps only the first ${maxSaslPasswordBytes} bytes of a longer password (so the operator refuses one)`, async () => {
    const long = `${'a'.repeat(maxSaslPasswordBytes)}b`;
    await withOwnSecret('long-password', { username, password: long }, async (port) => {
      await expect(client({ username, password: long }, port).get('k')).rejects.toBe(refused);
      const cut = client({ username, password: long.slice(0, maxSaslPasswordBytes) }, port);
      expect((await cut.get('k')).value).toBeNull();
    });
  });

  it('never authenticates a username with whitespace at either end (so the operator refuses one)', async () => {
    await withOwnSecret('spaced-user', { username: 'shop\r', password }, async (port) => {
      await expect(client({ username: 'shop\r', password }, port).get('k')).rejects.toBe(refused);
      await expect(client({ username: 'shop', password }, port).get('k')).rejects.toBe(refused);
    });
  });

  it('fails the init container, saying which key, when the Secret lacks the password', async () => {
    const empty = join(dir, 'no-password');
    mkdirSync(empty);
    writeSaslSecretFiles(join(empty, 'secret'), username, '');
    await expect(
      runSaslDatabaseScript({ ...layout, saslCredentialsDir: join(empty, 'secret'), saslDir: empty }),
    ).rejects.toMatchObject({ stderr: 'the SASL Secret has no password (or an empty one)\n' });
  });
});
