// A real S3-compatible server for tests: versitygw (built from the Go module proxy by
// tools/build-binaries.sh) with its posix backend, which keeps each bucket as a directory and each
// object as a file under a temporary root. Lighter than MinIO to build and to run; it speaks the
// S3 API the operators' backup code uses (multipart uploads included), with SigV4 auth.
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { binaryPath } from '../binaries.ts';
import { freeLoopbackPort } from '../free-port.ts';
import { logTail, startProcess, type ManagedProcess } from '../managed-process.ts';
import { httpGet, waitUntil } from '../readiness.ts';

export interface S3ServerOptions {
  /** Buckets to create before the server starts (default none). */
  readonly buckets?: readonly string[];
  /** Keep the root directory after stop(), for debugging. */
  readonly keepRootDir?: boolean;
}

/** A running S3-compatible server on loopback, owned by one test file. */
export interface S3TestServer {
  /** http://127.0.0.1:<port>; address buckets path-style (`forcePathStyle`). */
  readonly endpoint: string;
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
  const process = startProcess({
    name: 'versitygw',
    command: binaryPath('versitygw'),
    args: ['--port', `127.0.0.1:${port}`, '--region', region, 'posix', rootDir],
    // Credentials through the environment, so they never show in a process listing.
    env: {
      ...globalThis.process.env,
      ROOT_ACCESS_KEY_ID: accessKeyId,
      ROOT_SECRET_ACCESS_KEY: secretAccessKey,
    },
    logFile: join(workDir, 'versitygw.log'),
  });
  const endpoint = `http://127.0.0.1:${port}`;
  const stop = async () => {
    await process.stop(2000);
    if (!options.keepRootDir) await rm(workDir, { recursive: true, force: true });
  };
  try {
    // Any HTTP answer (an unauthenticated request gets 403) means it serves.
    await waitUntil(`versitygw at ${endpoint}`, async () => (await httpGet(endpoint)).status > 0, {
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
    rootDir,
    process,
    objectPath: (bucket, key) => join(rootDir, bucket, key),
    stop,
  };
}
