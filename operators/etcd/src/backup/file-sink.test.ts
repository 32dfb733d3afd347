import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fileSnapshotSink } from './file-sink.ts';
import type { BackupRecord } from './snapshot-sink.ts';

const record: Omit<BackupRecord, 'location'> = {
  sizeBytes: 0,
  sha256: '0'.repeat(64),
  revision: '1',
  revisionExact: true,
  memberId: '1',
  memberName: 'm',
  etcdVersion: '3.6.0',
  startedAt: '2026-11-23T00:00:00Z',
  finishedAt: '2026-11-23T00:00:01Z',
};

describe('file snapshot sink (background writes)', () => {
  let dir = '';
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'file-sink-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('writes every byte in order, across more chunks than one writev takes, without awaiting each write', async () => {
    const upload = await fileSnapshotSink(dir).create('s.db');
    // 5000 chunks of 1 to 4 KiB: more buffers than IOV_MAX (1024) queue behind a single write.
    const chunks = Array.from({ length: 5000 }, (_, i) => randomBytes(1024 + (i % 4) * 1024));
    const writes = chunks.map((chunk) => upload.write(chunk));
    await Promise.all(writes);
    await upload.flush();
    expect((await readFile(upload.localPath ?? '')).equals(Buffer.concat(chunks))).toBe(true);
    const location = await upload.commit(record);
    expect(location).toBe(join(dir, 's.db'));
    expect((await readFile(location)).equals(Buffer.concat(chunks))).toBe(true);
    expect(existsSync(`${location}.partial`)).toBe(false);
    expect(JSON.parse(await readFile(`${location}.json`, 'utf8'))).toMatchObject({ location, revision: '1' });
  });

  it('keeps every byte across the datasyncs it starts beside the writes (every 32 MiB)', async () => {
    const upload = await fileSnapshotSink(dir).create('big.db');
    const chunks = Array.from({ length: 70 }, () => randomBytes(1024 * 1024));
    for (const chunk of chunks) await upload.write(chunk);
    await upload.flush();
    const location = await upload.commit(record);
    expect((await readFile(location)).equals(Buffer.concat(chunks))).toBe(true);
  });

  it('checks the sha256 trailer on the bytes its writer thread wrote, whatever the chunking', async () => {
    const database = randomBytes(5 * 1024 * 1024 + 512);
    const snapshot = Buffer.concat([database, createHash('sha256').update(database).digest()]);
    const sizes = [1, 31, 32, 33, 16384, 700_000, 3];
    for (const [i, name] of ['good.db', 'corrupt.db'].entries()) {
      const bytes = Buffer.from(snapshot);
      if (i === 1) bytes[4096] = (bytes[4096] ?? 0) ^ 0xff;
      const upload = await fileSnapshotSink(dir).create(name);
      for (let at = 0, k = 0; at < bytes.length; k++) {
        const size = sizes[k % sizes.length] ?? 1;
        await upload.write(bytes.subarray(at, at + size));
        at += size;
      }
      const check = upload.verifyTrailer?.(name);
      if (i === 0) {
        expect(await check).toEqual({
          sizeBytes: snapshot.length,
          sha256: snapshot.subarray(snapshot.length - 32).toString('hex'),
        });
        await upload.flush();
        expect((await readFile(upload.localPath ?? '')).equals(snapshot)).toBe(true);
        await upload.commit(record);
      } else {
        await expect(check).rejects.toMatchObject({ reason: 'SnapshotHashMismatch' });
        await upload.abort();
        expect(existsSync(join(dir, 'corrupt.db.partial'))).toBe(false);
      }
    }
  });

  it('keeps writes made after flush, and abort leaves nothing behind', async () => {
    const upload = await fileSnapshotSink(dir).create('t.db');
    const first = randomBytes(3 * 1024 * 1024);
    const second = randomBytes(100);
    await upload.write(first);
    await upload.flush();
    await upload.write(second);
    const location = await upload.commit(record);
    expect((await readFile(location)).equals(Buffer.concat([first, second]))).toBe(true);

    const aborted = await fileSnapshotSink(dir).create('u.db');
    await aborted.write(randomBytes(2 * 1024 * 1024));
    await aborted.abort();
    expect(existsSync(join(dir, 'u.db.partial'))).toBe(false);
    expect(existsSync(join(dir, 'u.db'))).toBe(false);
  });
});
