import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SnapshotTrailerVerifier } from './snapshot-trailer.ts';

function snapshotBytes(pages: number): Buffer {
  const database = randomBytes(pages * 4096);
  return Buffer.concat([database, createHash('sha256').update(database).digest()]);
}

function verify(bytes: Buffer, chunkSize: number) {
  const verifier = new SnapshotTrailerVerifier();
  for (let i = 0; i < bytes.length; i += chunkSize) verifier.update(bytes.subarray(i, i + chunkSize));
  return verifier.finish('test snapshot');
}

describe('snapshot sha256 trailer check', () => {
  it('accepts a database followed by its sha256, whatever the chunking', () => {
    const bytes = snapshotBytes(3);
    const expected = bytes.subarray(bytes.length - 32).toString('hex');
    for (const chunk of [1, 7, 31, 32, 33, 4096, 32 * 1024, bytes.length]) {
      expect(verify(bytes, chunk)).toEqual({ sizeBytes: bytes.length, sha256: expected });
    }
  });

  it('accepts it cut into chunks of mixed sizes, short ones right before the trailer included', () => {
    const bytes = snapshotBytes(3);
    const expected = bytes.subarray(bytes.length - 32).toString('hex');
    const sizes = [5000, 3, 40, 1, 31, 32, 33, 700, 2, 9000];
    for (let shift = 0; shift < sizes.length; shift++) {
      const verifier = new SnapshotTrailerVerifier();
      let offset = 0;
      for (let i = shift; offset < bytes.length; i++) {
        const size = sizes[i % sizes.length] ?? 1;
        verifier.update(bytes.subarray(offset, offset + size));
        offset += size;
      }
      expect(verifier.finish('mixed chunks')).toEqual({ sizeBytes: bytes.length, sha256: expected });
    }
    // The last chunks shorter than the trailer, after a long one.
    const verifier = new SnapshotTrailerVerifier();
    verifier.update(bytes.subarray(0, bytes.length - 20));
    verifier.update(bytes.subarray(bytes.length - 20, bytes.length - 5));
    verifier.update(bytes.subarray(bytes.length - 5));
    expect(verifier.finish('short tail')).toEqual({ sizeBytes: bytes.length, sha256: expected });
  });

  it('refuses one changed byte, in the database or in the trailer', () => {
    for (const offset of [0, 5000, 3 * 4096 + 5]) {
      const bytes = snapshotBytes(3);
      bytes[offset] = (bytes[offset] ?? 0) ^ 0xff;
      expect(() => verify(bytes, 1000)).toThrow(/but the trailer says/);
    }
  });

  it('refuses a truncated snapshot or one without a trailer', () => {
    const bytes = snapshotBytes(2);
    expect(() => verify(bytes.subarray(0, bytes.length - 1), 512)).toThrow(/size % 512 must be 32/);
    expect(() => verify(bytes.subarray(0, 4096), 512)).toThrow(/size % 512 must be 32/);
    expect(() => verify(Buffer.alloc(0), 512)).toThrow(/size % 512 must be 32/);
  });
});
