import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { EtcdEngineError, messageOf } from '../errors.ts';
import {
  assertSnapshotSize,
  SnapshotTrailerVerifier,
  TRAILER_BYTES,
  type VerifiedSnapshot,
} from '../backup/snapshot-trailer.ts';

function unreadable(path: string, error: unknown): EtcdEngineError {
  return new EtcdEngineError(
    'verify snapshot',
    'SnapshotMalformed',
    `cannot read ${path}: ${messageOf(error)}`,
    {
      cause: error,
    },
  );
}

function refuseRecordMismatch(path: string, found: string, expectedSha256: string): never {
  throw new EtcdEngineError(
    'verify snapshot',
    'SnapshotHashMismatch',
    `${path}: its sha256 is ${found}, but the backup record says ${expectedSha256}; refusing to restore`,
  );
}

/**
 * What can be refused without reading the whole file: a size that cannot be a database and its
 * trailer, and a trailer that is not the recorded sha256 (a file swapped for another snapshot).
 * Whether the trailer is the database's hash takes the full read of verifySnapshotFile. Returns
 * the size and the trailer, which is the sha256 once that full read (or etcdutl's) agrees.
 */
export async function checkSnapshotShape(path: string, expectedSha256?: string): Promise<VerifiedSnapshot> {
  let size: number;
  const trailer = Buffer.alloc(TRAILER_BYTES);
  try {
    const file = await open(path, 'r');
    try {
      size = (await file.stat()).size;
      if (size >= TRAILER_BYTES) await file.read(trailer, 0, TRAILER_BYTES, size - TRAILER_BYTES);
    } finally {
      await file.close();
    }
  } catch (error) {
    throw unreadable(path, error);
  }
  assertSnapshotSize(size, path);
  const found = trailer.toString('hex');
  if (expectedSha256 !== undefined && expectedSha256.toLowerCase() !== found)
    refuseRecordMismatch(path, found, expectedSha256);
  return { sizeBytes: size, sha256: found };
}

/**
 * Reads a snapshot file and checks its sha256 trailer; if `expectedSha256` is given (from the backup
 * record), the trailer must also match it, so a file swapped for another valid snapshot is refused too.
 */
export async function verifySnapshotFile(path: string, expectedSha256?: string): Promise<VerifiedSnapshot> {
  const verifier = new SnapshotTrailerVerifier();
  try {
    for await (const chunk of createReadStream(path, { highWaterMark: 1024 * 1024 })) {
      verifier.update(chunk as Buffer);
    }
  } catch (error) {
    throw unreadable(path, error);
  }
  const verified = verifier.finish(path);
  if (expectedSha256 !== undefined && expectedSha256.toLowerCase() !== verified.sha256)
    refuseRecordMismatch(path, verified.sha256, expectedSha256);
  return verified;
}
