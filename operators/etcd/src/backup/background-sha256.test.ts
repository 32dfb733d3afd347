import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { BackgroundSha256 } from './background-sha256.ts';
import { SnapshotTrailerVerifier } from './snapshot-trailer.ts';

describe('sha256 on a worker thread', () => {
  it('gives the same digest as node:crypto for chunks of every size across its 1 MiB batches', async () => {
    const data = randomBytes(3 * 1024 * 1024 + 12345);
    const hash = new BackgroundSha256();
    for (let offset = 0, size = 1; offset < data.length; offset += size, size = (size * 7 + 13) % 300_000)
      hash.update(data.subarray(offset, offset + size));
    await hash.settle();
    expect(hash.digest()).toBe(createHash('sha256').update(data).digest('hex'));
  });

  it('refuses a digest before settle, and a verifier with it checks a trailer as the local one does', async () => {
    const database = randomBytes(512 * 7);
    const trailer = createHash('sha256').update(database).digest();
    const hash = new BackgroundSha256();
    expect(() => hash.digest()).toThrow(/before settle/);
    const verifier = new SnapshotTrailerVerifier(hash);
    verifier.update(database);
    verifier.update(trailer);
    await hash.settle();
    expect(verifier.finish('test snapshot')).toEqual({
      sizeBytes: 512 * 7 + 32,
      sha256: trailer.toString('hex'),
    });

    const corrupt = new BackgroundSha256();
    const refusing = new SnapshotTrailerVerifier(corrupt);
    refusing.update(Buffer.concat([database, Buffer.alloc(32)]));
    await corrupt.settle();
    expect(() => refusing.finish('corrupt snapshot')).toThrow(/the trailer says 0{64}/);
    await corrupt.dispose();
  });
});
