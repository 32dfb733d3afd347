// readSnapshotRevision against `etcdutl snapshot status` on snapshots streamed from a real etcd
// member: a small database (its `key` bucket inline in its parent page), a large one (a tree of
// branch pages), one whose last operation was a delete, compacted ones, and files that are not
// etcd databases.
import { mkdtemp, open, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Etcd3 } from 'etcd3';
import { binaryPath } from '@homeostat/testing';
import { startEtcdCluster, type EtcdTestCluster } from '@homeostat/testing/etcd';
import { openClient } from '../connection.ts';
import { snapshotFileStatus } from '../etcdutl.ts';
import { readSnapshotRevision } from './snapshot-revision.ts';
import { readSnapshotStream } from './snapshot-stream.ts';

const etcdutl = binaryPath('etcdutl');
let cluster: EtcdTestCluster;
let client: Etcd3;
let work: string;
let taken = 0;

/** Streams a snapshot of the member into a file (the trailer included, as a backup keeps it). */
async function snapshot(): Promise<string> {
  const blobs: Buffer[] = [];
  await readSnapshotStream({ clientUrl: cluster.clientUrls()[0] ?? '' }, (blob) => {
    blobs.push(Buffer.from(blob));
  });
  const path = join(work, `snapshot-${taken++}.db`);
  await writeFile(path, Buffer.concat(blobs));
  return path;
}

/** The revision this reader finds, beside etcdutl's. */
async function bothRevisions(path: string): Promise<{ ours: string; etcdutl: string }> {
  return {
    ours: await readSnapshotRevision(path),
    etcdutl: (await snapshotFileStatus(etcdutl, path)).revision,
  };
}

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'homeostat-snapshot-revision-'));
  cluster = await startEtcdCluster({ namePrefix: 'revision' });
  client = openClient({ endpoints: cluster.clientUrls() });
});
afterAll(async () => {
  client?.close();
  await cluster?.stop();
  await rm(work, { recursive: true, force: true });
});

describe('readSnapshotRevision on snapshots of a real etcd member', () => {
  it('reads the revision of a small database, whose key bucket sits inline in its parent page', async () => {
    const put = await client.put('small/one').value('1');
    const path = await snapshot();
    expect(await bothRevisions(path)).toEqual({ ours: put.header.revision, etcdutl: put.header.revision });
  });

  it('reads the revision of a database whose key bucket is a tree of branch and leaf pages', async () => {
    const value = Buffer.alloc(2048, 'revision-tree-');
    for (let i = 0; i < 3000; i += 100)
      await Promise.all(
        Array.from({ length: 100 }, (_, j) =>
          client.put(`tree/${String(i + j).padStart(5, '0')}`).value(value),
        ),
      );
    const last = await client.put('tree/last').value('last');
    const path = await snapshot();
    expect(await bothRevisions(path)).toEqual({ ours: last.header.revision, etcdutl: last.header.revision });
  });

  it('reads the revision of a delete when a delete was the last operation', async () => {
    await client.put('deleted/key').value('gone soon');
    const deleted = await client.delete().key('deleted/key').exec();
    const path = await snapshot();
    expect(await bothRevisions(path)).toEqual({
      ours: deleted.header.revision,
      etcdutl: deleted.header.revision,
    });
  });

  it('agrees with etcdutl on compacted databases, after a put and after a delete at the compaction', async () => {
    for (let i = 0; i < 200; i++) await client.put('compacted/overwritten').value(String(i));
    const put = await client.put('compacted/last').value('last');
    await client.kv.compact({ revision: put.header.revision, physical: true });
    const afterPut = await bothRevisions(await snapshot());
    expect(afterPut).toEqual({ ours: put.header.revision, etcdutl: put.header.revision });

    // Compaction removes a tombstone at its revision from the key bucket: both then report the
    // newest revision left in the bucket, below the store's.
    await client.put('compacted/deleted').value('gone soon');
    const deleted = await client.delete().key('compacted/deleted').exec();
    await client.kv.compact({ revision: deleted.header.revision, physical: true });
    const afterDelete = await bothRevisions(await snapshot());
    expect(afterDelete.ours).toBe(afterDelete.etcdutl);
    expect(BigInt(afterDelete.ours)).toBeLessThanOrEqual(BigInt(deleted.header.revision));
  });

  it('falls back to the other meta page when the newer one is damaged, as bbolt does', async () => {
    const put = await client.put('meta/key').value('value');
    const path = await snapshot();
    const damaged = join(work, 'damaged-meta.db');
    const bytes = await readFile(path);
    // Flip a byte in meta page 0's checksummed part (a snapshot's two metas are the same).
    bytes[16 + 40] = (bytes[16 + 40] ?? 0) ^ 0xff;
    await writeFile(damaged, bytes);
    expect(await readSnapshotRevision(damaged)).toBe(put.header.revision);
  });

  it('refuses a file that is not a bbolt database, or whose meta pages are both damaged', async () => {
    const text = join(work, 'not-bbolt.db');
    await writeFile(text, Buffer.alloc(16384, 'not a database '));
    await expect(readSnapshotRevision(text)).rejects.toThrow(/not a bbolt database, or a corrupt one/);

    const path = await snapshot();
    const file = await open(path, 'r+');
    try {
      const pageSize = (await readFile(path)).readUInt32LE(16 + 8);
      await file.write(Buffer.alloc(8, 0xff), 0, 8, 16 + 40);
      await file.write(Buffer.alloc(8, 0xff), 0, 8, pageSize + 16 + 40);
    } finally {
      await file.close();
    }
    await expect(readSnapshotRevision(path)).rejects.toThrow(/neither meta page/);
  });
});
