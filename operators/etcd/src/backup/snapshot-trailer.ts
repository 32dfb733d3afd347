import { createHash, type Hash } from 'node:crypto';
import { EtcdEngineError } from '../errors.ts';

/** Length of the sha256 digest etcd appends to every snapshot stream (and etcdctl to every file). */
export const TRAILER_BYTES = 32;

/** What a verified snapshot is: its full size (trailer included) and the hex sha256 of its database. */
export interface VerifiedSnapshot {
  readonly sizeBytes: number;
  readonly sha256: string;
}

/** Throws SnapshotMalformed unless `size` bytes can be a bbolt database followed by its trailer. */
export function assertSnapshotSize(size: number, what: string): void {
  // etcdutl recognises a trailer only when size % 512 == 32 (bbolt pages are multiples of 512).
  if (size < TRAILER_BYTES || size % 512 !== TRAILER_BYTES) {
    throw new EtcdEngineError(
      'verify snapshot',
      'SnapshotMalformed',
      `${what}: ${size} bytes is not a database followed by a 32-byte sha256 trailer ` +
        '(size % 512 must be 32); the snapshot is truncated or not an etcd snapshot',
    );
  }
}

/**
 * Checks etcd's snapshot integrity trailer while the bytes go by: everything but the last 32 bytes is
 * the bbolt database, and the last 32 bytes are its sha256. Until the end nobody knows which bytes
 * are last, so the latest chunk is held back from the hash until the next one comes: one hash call
 * per chunk and no copy (a snapshot arrives in some 30,000 chunks). Chunks are kept, not copied:
 * a caller must not reuse a buffer it passed to `update` (streams hand out fresh ones).
 */
export class SnapshotTrailerVerifier {
  readonly #hash: Hash = createHash('sha256');
  #held: Uint8Array = Buffer.alloc(0);
  #size = 0;

  /** Feeds the next chunk, in stream order. */
  update(chunk: Uint8Array): void {
    this.#size += chunk.length;
    if (chunk.length >= TRAILER_BYTES) {
      if (this.#held.length > 0) this.#hash.update(this.#held);
      this.#held = chunk;
      return;
    }
    // Shorter than a trailer: hold the last 32 bytes of what was held and this, hash the rest.
    const joined = Buffer.concat([this.#held, chunk]);
    const cut = Math.max(0, joined.length - TRAILER_BYTES);
    this.#hash.update(joined.subarray(0, cut));
    this.#held = joined.subarray(cut);
  }

  /** Ends the check; throws SnapshotMalformed or SnapshotHashMismatch with what was expected and found. */
  finish(what: string): VerifiedSnapshot {
    assertSnapshotSize(this.#size, what);
    const cut = this.#held.length - TRAILER_BYTES;
    this.#hash.update(this.#held.subarray(0, cut));
    const trailer = Buffer.from(this.#held.subarray(cut)).toString('hex');
    return checkTrailer(this.#size, this.#hash.digest('hex'), trailer, what);
  }
}

/**
 * The check itself, for whoever hashed the bytes: `size` bytes in all, `computed` the hex sha256 of
 * all but the last 32, `trailer` those 32 in hex. Throws SnapshotMalformed or SnapshotHashMismatch.
 */
export function checkTrailer(
  size: number,
  computed: string,
  trailer: string,
  what: string,
): VerifiedSnapshot {
  assertSnapshotSize(size, what);
  if (computed !== trailer) {
    throw new EtcdEngineError(
      'verify snapshot',
      'SnapshotHashMismatch',
      `${what}: sha256 of the first ${size - TRAILER_BYTES} bytes is ${computed}, but the trailer ` +
        `says ${trailer}; the snapshot is corrupt and must not be restored`,
    );
  }
  return { sizeBytes: size, sha256: trailer };
}
