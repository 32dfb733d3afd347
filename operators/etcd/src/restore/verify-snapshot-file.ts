import { createReadStream } from 'node:fs';
import { EtcdEngineError, messageOf } from '../errors.ts';
import { SnapshotTrailerVerifier, type VerifiedSnapshot } from '../backup/snapshot-trailer.ts';

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
    throw new EtcdEngineError(
      'verify snapshot',
      'SnapshotMalformed',
      `cannot read ${path}: ${messageOf(error)}`,
      {
        cause: error,
      },
    );
  }
  const verified = verifier.finish(path);
  if (expectedSha256 !== undefined && expectedSha256.toLowerCase() !== verified.sha256) {
    throw new EtcdEngineError(
      'verify snapshot',
      'SnapshotHashMismatch',
      `${path}: its sha256 is ${verified.sha256}, but the backup record says ${expectedSha256}; refusing to restore`,
    );
  }
  return verified;
}
