// A real S3-compatible server for tests: versitygw (built from the Go module proxy by
// tools/build-binaries.sh) with its posix backend, which keeps each bucket as a directory and each
// object as a file under a temporary root. Lighter than MinIO to build and to run; it speaks the
// S3 API the operators' backup code uses (multipart uploads included), with SigV4 auth.
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { binaryPath } from '../binaries.ts';
import { freeLoopbackPort } from '../free-port.ts';
import { logTail, startProcess, type ManagedProcess } from '../managed-process.ts';
import { createTestCa, issueTestCertificate } from '../pki.ts';
import { httpGet, waitUntil } from '../readiness.ts';

export interface S3ServerOptions {
  /** Buckets to create before the server starts (default none). */
  readonly buckets?: readonly string[];
  /** Keep the root directory after stop(), for debugging. */
  readonly keepRootDir?: boolean;
  /**
   * Serve HTTPS with a certificate from a throwaway CA, for clients that speak S3 only over TLS
   * (pgBackRest). The endpoint is then https://localhost:<port>: pgBackRest 2.45 matches the
   * server's name against DNS names only, never IP addresses.
   */
  readonly tls?: boolean;
}

/** A running S3-compatible server on loopback, owned by one test file. */
export interface S3TestServer {
  /** http://127.0.0.1:<port> (https://localhost:<port> with `tls`); address buckets path-style (`forcePathStyle`). */
  readonly endpoint: string;
  /** With `tls`: the CA certificate (PEM file, world-readable) that signed the server's certificate. */
  readonly caFile?: string;
  readonly region: string;
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  /** The posix backend's root: `<rootDir>/<bucket>/<key>` is an object's file. */
  readonly rootDir: string;
  readonly process: ManagedProcess;
  /** The file that holds an object's bytes (for tests that corrupt one on purpose). */
  objectPath(bucket: string, key: string): string;
  /** Stops the server and removes its root directory. */
  stop(): Promise<void>;
}

/** Starts versitygw on a free loopback port with fresh root credentials; resolves once it answers. */
export async function startS3Server(options: S3ServerOptions = {}): Promise<S3TestServer> {
  const workDir = await mkdtemp(join(tmpdir(), 'homeostat-s3-'));
  const rootDir = join(workDir, 'buckets');
  // versitygw's posix backend sees a directory directly under its root as a bucket.
  for (const bucket of options.buckets ?? []) await mkdir(join(rootDir, bucket), { recursive: true });
  await mkdir(rootDir, { recursive: true });
  const port = await freeLoopbackPort();
  const accessKeyId = `test${randomBytes(6).toString('hex')}`;
  const secretAccessKey = randomBytes(20).toString('hex');
  const region = 'us-east-1';
  const tls = options.tls ? await serverCertificate(workDir) : undefined;
  const process = startProcess({
    name: 'versitygw',
    command: binaryPath('versitygw'),
    args: [
      '--port',
      `127.0.0.1:${port}`,
      '--region',
      region,
      ...(tls ? ['--cert', tls.cert, '--key', tls.key] : []),
      'posix',
      rootDir,
    ],
    // Credentials through the environment, so they never show in a process listing.
    env: {
      ...globalThis.process.env,
      ROOT_ACCESS_KEY_ID: accessKeyId,
      ROOT_SECRET_ACCESS_KEY: secretAccessKey,
    },
    logFile: join(workDir, 'versitygw.log'),
  });
  const endpoint = tls ? `https://localhost:${port}` : `http://127.0.0.1:${port}`;
  const stop = async () => {
    await process.stop(2000);
    if (!options.keepRootDir) await rm(workDir, { recursive: true, force: true });
  };
  try {
    // Any HTTP answer (an unauthenticated request gets 403) means it serves.
    const answers = tls ? () => httpsStatus(endpoint, tls.ca) : async () => (await httpGet(endpoint)).status;
    await waitUntil(`versitygw at ${endpoint}`, async () => (await answers()) > 0, {
      timeoutMs: 30_000,
      intervalMs: 100,
      abort: process.exited.then((code) => `versitygw exited (${String(code)})`),
      describe: () => logTail(process.logFile),
    });
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    endpoint,
    region,
    accessKeyId,
    secretAccessKey,
    ...(tls ? { caFile: tls.caFile } : {}),
    rootDir,
    process,
    objectPath: (bucket, key) => join(rootDir, bucket, key),
    stop,
  };
}

/** A CA and a server certificate for loopback under `dir`; the CA readable by any user (a client may run as `postgres`). */
async function serverCertificate(dir: string) {
  const tlsDir = join(dir, 'tls');
  await mkdir(tlsDir);
  const ca = await createTestCa(tlsDir, 'ca', 'homeostat-s3-test-ca');
  const leaf = await issueTestCertificate(ca, tlsDir, 'server', {
    subject: '/CN=localhost',
    sans: ['DNS:localhost', 'IP:127.0.0.1'],
    usages: ['serverAuth'],
    describe: 'the S3 server certificate',
  });
  await chmod(dir, 0o755);
  await chmod(tlsDir, 0o755);
  await chmod(ca.cert, 0o644);
  return { cert: leaf.cert, key: leaf.key, caFile: ca.cert, ca: await readFile(ca.cert) };
}

/** The HTTP status of a GET over TLS trusting `ca` only; 0 while nothing answers. */
function httpsStatus(url: string, ca: Buffer): Promise<number> {
  return new Promise((resolve) => {
    const req = httpsRequest(url, { method: 'GET', ca, timeout: 2000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(0));
    req.end();
  });
}
