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
 * the bbolt database, and the last 32 bytes are its sha256. Until the end we cannot know which bytes
 * are last, so the most recent 32 are held back from the hash.
 */
export class SnapshotTrailerVerifier {
  readonly #hash: Hash = createHash('sha256');
  #tail: Buffer = Buffer.alloc(0);
  #size = 0;

  /** Feeds the next chunk, in stream order. */
  update(chunk: Uint8Array): void {
    this.#size += chunk.length;
    if (chunk.length >= TRAILER_BYTES) {
      this.#hash.update(this.#tail);
      this.#hash.update(chunk.subarray(0, chunk.length - TRAILER_BYTES));
      this.#tail = Buffer.from(chunk.subarray(chunk.length - TRAILER_BYTES));
      return;
    }
    const joined = Buffer.concat([this.#tail, chunk]);
    const cut = Math.max(0, joined.length - TRAILER_BYTES);
    this.#hash.update(joined.subarray(0, cut));
    this.#tail = joined.subarray(cut);
  }

  /** Ends the check; throws SnapshotMalformed or SnapshotHashMismatch with what was expected and found. */
  finish(what: string): VerifiedSnapshot {
    const step = 'verify snapshot';
    assertSnapshotSize(this.#size, what);
    const computed = this.#hash.digest('hex');
    const trailer = this.#tail.toString('hex');
    if (computed !== trailer) {
      throw new EtcdEngineError(
        step,
        'SnapshotHashMismatch',
        `${what}: sha256 of the first ${this.#size - TRAILER_BYTES} bytes is ${computed}, but the trailer ` +
          `says ${trailer}; the snapshot is corrupt and must not be restored`,
      );
    }
    return { sizeBytes: this.#size, sha256: trailer };
  }
}
