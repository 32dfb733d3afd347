// What the operator image runs as init containers of the first member of a cluster restored from
// a backup (docs/adr/0302). Three steps around etcd's own `etcdutl snapshot restore`, each safe to
// run again (init containers run again when a pod's sandbox is made again):
//   fetch   download the snapshot into the member's volume, checking its sha256 trailer (and the
//           recorded sha256) on the way; kept once verified, so a rerun needs no download. Clears
//           the staging directory etcdutl restores into (etcdutl refuses a non-empty one).
//   (etcdutl snapshot restore <snapshot> --data-dir=<staging>, in the etcd image)
//   finish  move the staging directory to etcd's data directory, unless the member already has
//           data (a rerun after the member has run: its data is newer than the backup).
import { createWriteStream, existsSync } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Transform } from 'node:stream';
import { verifySnapshotFile } from '../restore/verify-snapshot-file.ts';
import { openS3Store } from './s3-store.ts';
import { SnapshotTrailerVerifier } from './snapshot-trailer.ts';

/** Where the agent works inside the member's volume. */
export interface RestorePaths {
  /** etcd's data directory (`<volume>/data`). */
  readonly dataDir: string;
  /** `<volume>/restore`: the snapshot and the staging data directory. */
  readonly workDir: string;
}

export const snapshotFile = (paths: RestorePaths) => join(paths.workDir, 'snapshot.db');
export const stagingDir = (paths: RestorePaths) => join(paths.workDir, 'data');
const hasMemberData = (dataDir: string) => existsSync(join(dataDir, 'member'));

export interface FetchRequest extends RestorePaths {
  readonly bucket: string;
  readonly key: string;
  readonly region: string;
  readonly endpoint?: string;
  readonly forcePathStyle: boolean;
  readonly expectedSha256?: string;
  readonly credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
}

/** Step 1: the verified snapshot at `snapshotFile`, and an empty staging directory. */
export async function fetchSnapshot(request: FetchRequest, log: (line: string) => void): Promise<void> {
  await mkdir(request.workDir, { recursive: true, mode: 0o700 });
  await rm(stagingDir(request), { recursive: true, force: true });
  const target = snapshotFile(request);
  if (existsSync(target)) {
    // Verified before it was renamed into place; checked again, as cheap as a download is not.
    await verifySnapshotFile(target, request.expectedSha256);
    log(`${target} present and verified; not downloading again`);
    return;
  }
  const store = await openS3Store({
    bucket: request.bucket,
    region: request.region,
    forcePathStyle: request.forcePathStyle,
    credentials: request.credentials,
    ...(request.endpoint ? { endpoint: request.endpoint } : {}),
  });
  const partial = `${target}.partial`;
  const verifier = new SnapshotTrailerVerifier();
  try {
    const body = await store.read(request.key);
    const check = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        verifier.update(chunk);
        done(null, chunk);
      },
    });
    await pipeline(body, check, createWriteStream(partial, { mode: 0o600 }));
    const verified = verifier.finish(`s3://${request.bucket}/${request.key}`);
    if (request.expectedSha256 && verified.sha256 !== request.expectedSha256) {
      throw new Error(
        `s3://${request.bucket}/${request.key}: its sha256 is ${verified.sha256}, but the backup record says ${request.expectedSha256}`,
      );
    }
    await rename(partial, target);
    log(
      `fetched s3://${request.bucket}/${request.key}: ${verified.sizeBytes} bytes, sha256 ${verified.sha256}`,
    );
  } finally {
    await rm(partial, { force: true });
    store.close();
  }
}

/** Step 3: etcdutl's result becomes etcd's data directory, unless the member already has data. */
export async function finishRestore(paths: RestorePaths, log: (line: string) => void): Promise<void> {
  if (hasMemberData(paths.dataDir)) {
    log(`${paths.dataDir} already holds member data; the restored copy is discarded`);
  } else {
    await rm(paths.dataDir, { recursive: true, force: true });
    await rename(stagingDir(paths), paths.dataDir);
    log(`restored data moved to ${paths.dataDir}`);
  }
  await rm(stagingDir(paths), { recursive: true, force: true });
}

/** `fetch-backup` / `finish-restore` command lines: `--name=value` flags, credentials from the environment. */
export async function runRestoreAgent(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<void> {
  const [command, ...rest] = argv;
  const flags = new Map(
    rest.map((arg) => {
      const [name = '', ...value] = arg.replace(/^--/, '').split('=');
      return [name, value.join('=')] as const;
    }),
  );
  const required = (name: string) => {
    const value = flags.get(name);
    if (!value) throw new Error(`${command ?? ''}: --${name} is required`);
    return value;
  };
  const paths = { dataDir: required('data-dir'), workDir: required('work-dir') };
  // One JSON line per step on stderr, where the kubelet keeps an init container's log.
  const log = (line: string) => console.error(JSON.stringify({ msg: line, step: command }));
  if (command === 'finish-restore') return finishRestore(paths, log);
  const accessKeyId = env['AWS_ACCESS_KEY_ID'];
  const secretAccessKey = env['AWS_SECRET_ACCESS_KEY'];
  if (!accessKeyId || !secretAccessKey) {
    throw new Error('fetch-backup: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set');
  }
  const sessionToken = env['AWS_SESSION_TOKEN'];
  const endpoint = flags.get('endpoint');
  const expectedSha256 = flags.get('sha256');
  await fetchSnapshot(
    {
      ...paths,
      bucket: required('bucket'),
      key: required('key'),
      region: required('region'),
      forcePathStyle: flags.get('force-path-style') === 'true',
      ...(endpoint ? { endpoint } : {}),
      ...(expectedSha256 ? { expectedSha256 } : {}),
      credentials: { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) },
    },
    log,
  );
}

/** The agent's commands (what main.ts hands over to it instead of starting the operator). */
export const restoreAgentCommands = ['fetch-backup', 'finish-restore'];
