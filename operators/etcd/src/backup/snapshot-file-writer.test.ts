import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, open, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SnapshotFileWriter } from './snapshot-file-writer.ts';

describe('SnapshotFileWriter (a writer thread that writes and hashes)', () => {
  let dir = '';
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'file-writer-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('writes every byte and hashes all but the last 32, which it gives back as the trailer', async () => {
    const path = join(dir, 'out');
    const file = await open(path, 'w');
    const writer = new SnapshotFileWriter(file.fd, path);
    const bytes = randomBytes(12 * 1024 * 1024 + 100);
    try {
      // More than the 8 MiB in-flight limit without yielding: some writes must ask to wait.
      let waits = 0;
      for (let at = 0; at < bytes.length; at += 100_000) {
        const wait = writer.write(bytes.subarray(at, at + 100_000));
        if (wait) {
          waits++;
          await wait;
        }
      }
      const digest = await writer.digest();
      expect(digest).toEqual({
        sizeBytes: bytes.length,
        sha256: createHash('sha256')
          .update(bytes.subarray(0, bytes.length - 32))
          .digest('hex'),
        trailer: bytes.subarray(bytes.length - 32).toString('hex'),
      });
      await writer.sync();
      expect((await readFile(path)).equals(bytes)).toBe(true);
      expect(waits).toBeGreaterThan(0);
    } finally {
      await writer.close();
      await file.close();
    }
  });

  it('fails the next call with the file and the cause when a write fails', async () => {
    const path = join(dir, 'read-only');
    await writeFile(path, '');
    const file = await open(path, 'r');
    const writer = new SnapshotFileWriter(file.fd, path);
    try {
      writer.write(randomBytes(2 * 1024 * 1024));
      await expect(writer.drain()).rejects.toThrow(`write ${path}`);
      expect(() => writer.write(Buffer.from('more'))).toThrow(`write ${path}`);
    } finally {
      await writer.close();
      await file.close();
    }
  });
});
