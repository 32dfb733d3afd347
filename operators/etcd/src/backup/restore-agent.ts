// What the operator image runs as init containers of the first member of a cluster restored from
// a backup (docs/adr/0302). Three steps around etcd's own `etcdutl snapshot restore`, each safe to
// run again (init containers run again when a pod's sandbox is made again):
//   fetch   download the snapshot into the member's volume, checking its sha256 trailer (and the
//           recorded sha256) on the way; kept once verified, so a rerun needs no download. Clears
//           the staging directory etcdutl restores into (etcdutl refuses a non-empty one). When
//           the member already has data it fetches nothing (and, with no snapshot left, gives
//           etcdutl a stand-in made from the member's own database, discarded by finish).
//   (etcdutl snapshot restore <snapshot> --data-dir=<staging>, in the etcd image)
//   finish  move the staging directory to etcd's data directory, unless the member already has
//           data (a rerun after the member has run: its data is newer than the backup).
import { createReadStream, createWriteStream, existsSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
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
  const location = `s3://${request.bucket}/${request.key}`;
  await placeSnapshot(request, location, request.expectedSha256, log, async () => {
    const store = await openS3Store({
      bucket: request.bucket,
      region: request.region,
      forcePathStyle: request.forcePathStyle,
      credentials: request.credentials,
      ...(request.endpoint ? { endpoint: request.endpoint } : {}),
    });
    return { body: await store.read(request.key), close: () => store.close() };
  });
}

export interface CopyRequest extends RestorePaths {
  /** The backup file in the claim mounted read-only into the pod. */
  readonly source: string;
  readonly expectedSha256?: string;
}

/** Step 1 for a backup in a claim: the same, copied from the mounted file instead of downloaded. */
export async function copySnapshot(request: CopyRequest, log: (line: string) => void): Promise<void> {
  await placeSnapshot(request, request.source, request.expectedSha256, log, () =>
    Promise.resolve({ body: createReadStream(request.source), close: () => undefined }),
  );
}

/** Streams `open()`'s body into `snapshotFile` through the trailer (and record) check. */
async function placeSnapshot(
  paths: RestorePaths,
  location: string,
  expectedSha256: string | undefined,
  log: (line: string) => void,
  open: () => Promise<{ body: AsyncIterable<Uint8Array>; close: () => void }>,
): Promise<void> {
  await mkdir(paths.workDir, { recursive: true, mode: 0o700 });
  await rm(stagingDir(paths), { recursive: true, force: true });
  const target = snapshotFile(paths);
  if (existsSync(target)) {
    // Verified before it was renamed into place; checked again, as cheap as a download is not.
    await verifySnapshotFile(target, expectedSha256);
    log(`${target} present and verified; not downloading again`);
    return;
  }
  const partial = `${target}.partial`;
  const verifier = new SnapshotTrailerVerifier();
  const source = await open();
  try {
    const check = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        verifier.update(chunk);
        done(null, chunk);
      },
    });
    await pipeline(source.body, check, createWriteStream(partial, { mode: 0o600 }));
    const verified = verifier.finish(location);
    if (expectedSha256 && verified.sha256 !== expectedSha256) {
      throw new Error(
        `${location}: its sha256 is ${verified.sha256}, but the backup record says ${expectedSha256}`,
      );
    }
    await rename(partial, target);
    log(`fetched ${location}: ${verified.sizeBytes} bytes, sha256 ${verified.sha256}`);
  } finally {
    await rm(partial, { force: true });
    source.close();
  }
}

/**
 * Before step 1: a member that already has data (the pod's init containers run again after the
 * member has run, on a node reboot) needs no snapshot, so no download and no credentials: the
 * backup may be pruned and its Secret rotated by then. Clears the staging directory for etcdutl.
 * True when step 1 is skipped.
 */
export async function skipFetchForMemberData(
  paths: RestorePaths,
  log: (line: string) => void,
): Promise<boolean> {
  if (!hasMemberData(paths.dataDir)) return false;
  await rm(stagingDir(paths), { recursive: true, force: true });
  log(`${paths.dataDir} already holds member data; no backup fetched`);
  if (!existsSync(snapshotFile(paths))) await placeStandInSnapshot(paths, log);
  return true;
}

/** Marks `snapshotFile` as a stand-in, which `finishRestore` deletes. */
const standInMarker = (paths: RestorePaths) => `${snapshotFile(paths)}.stand-in`;

/**
 * Member data and no snapshot (a volume whose data came from elsewhere, or whose snapshot was
 * deleted by hand): etcdutl, the next init container, runs in the distroless etcd image with fixed
 * arguments and fails on a missing file. It is given the member's own database as a snapshot
 * (the bbolt file followed by its sha256, etcd's snapshot format); what it restores is discarded
 * by `finishRestore`, which never replaces member data, and so is the stand-in.
 */
async function placeStandInSnapshot(paths: RestorePaths, log: (line: string) => void): Promise<void> {
  const database = join(paths.dataDir, 'member', 'snap', 'db');
  if (!existsSync(database)) {
    log(`${database} missing: no stand-in snapshot for etcdutl`);
    return;
  }
  await mkdir(paths.workDir, { recursive: true, mode: 0o700 });
  await writeFile(standInMarker(paths), '');
  const target = snapshotFile(paths);
  const partial = `${target}.partial`;
  const hash = createHash('sha256');
  const check = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      done(null, chunk);
    },
    flush(done) {
      done(null, hash.digest());
    },
  });
  try {
    await pipeline(createReadStream(database), check, createWriteStream(partial, { mode: 0o600 }));
    await rename(partial, target);
  } finally {
    await rm(partial, { force: true });
  }
  log(`${target}: a stand-in from the member's own database, for etcdutl; discarded after`);
}

/** Step 3: etcdutl's result becomes etcd's data directory, unless the member already has data. */
export async function finishRestore(paths: RestorePaths, log: (line: string) => void): Promise<void> {
  if (hasMemberData(paths.dataDir)) {
    log(`${paths.dataDir} already holds member data; the restored copy is discarded`);
    if (existsSync(standInMarker(paths))) {
      await rm(snapshotFile(paths), { force: true });
      await rm(standInMarker(paths), { force: true });
    }
  } else {
    await rm(paths.dataDir, { recursive: true, force: true });
    await rename(stagingDir(paths), paths.dataDir);
    log(`restored data moved to ${paths.dataDir}`);
  }
  await rm(stagingDir(paths), { recursive: true, force: true });
}
