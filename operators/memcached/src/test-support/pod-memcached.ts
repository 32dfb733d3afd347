// A real memcached started as a Memcached's pod starts it (memcachedArgs, memcachedEnv), with the
// files its Secrets would give it: a TLS Secret's files from a throwaway CA, and the SASL database
// the init container's own script builds with the machine's saslpasswd2.
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  createTestCa,
  freeLoopbackPort,
  issueTestCertificate,
  logTail,
  startProcess,
  waitUntil,
  type ManagedProcess,
} from '@homeostat/testing';
import { accepts } from '../../../../bench/memcached/memcached-process.ts';
import type { MemcachedSpecFields } from '../api/memcached-types.ts';
import { memcachedArgs, memcachedEnv, type PodLayout } from '../controllers/memcached-command.ts';
import { saslDatabaseEnv, saslDatabaseScript } from '../controllers/sasl-database.ts';

const exec = promisify(execFile);
// saslpasswd2 lives in /usr/sbin, which a non-root PATH may lack.
const pathWithSbin = `${process.env['PATH'] ?? ''}:/usr/sbin:/sbin`;

/** memcached with the pod's arguments for `spec` (plus the user root needs); resolves once it accepts. */
export async function startPodMemcached(
  spec: MemcachedSpecFields,
  layout: PodLayout,
  logDir: string,
  tlsHasCa = false,
): Promise<ManagedProcess> {
  const logFile = join(logDir, 'memcached.log');
  const started = startProcess({
    name: 'memcached',
    command: 'memcached',
    args: [
      ...memcachedArgs(spec, { tlsHasCa }, layout),
      // memcached refuses to run as root without a user; naming root keeps the credentials unchanged.
      ...(process.getuid?.() === 0 ? ['--user=root'] : []),
    ],
    env: { ...process.env, ...memcachedEnv(spec, layout) },
    logFile,
  });
  const exited = started.exited.then((how) => `memcached exited (${String(how)})`);
  await waitUntil(`memcached on port ${spec.port}`, () => accepts(spec.port), {
    timeoutMs: 10_000,
    intervalMs: 20,
    abort: exited,
    describe: () => logTail(logFile),
  });
  return started;
}

/**
 * A TLS Secret's files as the kubelet mounts them (tls.crt for 127.0.0.1 and localhost, tls.key,
 * ca.crt) in `<dir>/tls`; returns that directory and the CA certificate's path.
 */
export async function writeTlsSecretFiles(dir: string): Promise<{ tlsDir: string; caCert: string }> {
  const tlsDir = join(dir, 'tls');
  mkdirSync(tlsDir);
  const ca = await createTestCa(tlsDir, 'ca', 'homeostat test memcached CA');
  await issueTestCertificate(ca, tlsDir, 'tls', {
    subject: '/CN=memcached',
    sans: ['IP:127.0.0.1', 'DNS:localhost'],
    usages: ['serverAuth'],
    describe: 'the memcached serving certificate',
  });
  return { tlsDir, caCert: ca.cert };
}

/**
 * A valid TLS Secret's data, base64 as the API server holds it (tls.crt, tls.key, ca.crt), made
 * by writeTlsSecretFiles in `dir`.
 */
export async function tlsSecretData(dir: string): Promise<Record<string, string>> {
  mkdirSync(dir, { recursive: true });
  const { tlsDir } = await writeTlsSecretFiles(dir);
  const read = (file: string) => readFileSync(join(tlsDir, file)).toString('base64');
  return { 'tls.crt': read('tls.crt'), 'tls.key': read('tls.key'), 'ca.crt': read('ca.crt') };
}

/** A SASL Secret's files (username, password written as given) in a new directory `dir`. */
export function writeSaslSecretFiles(dir: string, username: string, password: string): string {
  mkdirSync(dir);
  writeFileSync(join(dir, 'username'), username);
  writeFileSync(join(dir, 'password'), password);
  return dir;
}

/** Runs the init container's script for `layout`; resolves with what it printed, rejects as exec does. */
export async function runSaslDatabaseScript(layout: PodLayout): Promise<string> {
  const { stdout, stderr } = await exec('sh', ['-c', saslDatabaseScript], {
    env: { PATH: pathWithSbin, ...saslDatabaseEnv(layout) },
  });
  return stdout + stderr;
}

/** What `preparePodFiles` made: the layout to start memcached with, and the CA clients trust. */
export interface PreparedPod {
  readonly layout: PodLayout;
  readonly caCert: string;
  /** What the init container's script printed. */
  readonly initOutput: string;
}

/**
 * Everything a pod's containers would find on disk, under `dir`: the TLS Secret's files, with
 * `sasl` the SASL Secret's files (`password` written as given) and the database the init script
 * built from them, and a free loopback port for the statistics listener.
 */
export async function preparePodFiles(
  dir: string,
  sasl?: { username: string; password: string },
): Promise<PreparedPod> {
  const { tlsDir, caCert } = await writeTlsSecretFiles(dir);
  const layout: PodLayout = {
    tlsDir,
    saslDir: join(dir, 'sasl'),
    saslCredentialsDir: join(dir, 'sasl-credentials'),
    statsPort: await freeLoopbackPort(),
  };
  if (!sasl) return { layout, caCert, initOutput: '' };
  writeSaslSecretFiles(layout.saslCredentialsDir, sasl.username, sasl.password);
  mkdirSync(layout.saslDir);
  return { layout, caCert, initOutput: await runSaslDatabaseScript(layout) };
}
