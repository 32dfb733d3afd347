import { setTimeout as sleep } from 'node:timers/promises';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { binaryPath } from '@homeostat/testing';
import { startEtcdCluster, type EtcdTestCluster } from '@homeostat/testing/etcd';
import { openClient, withMemberClient, type EtcdConnection } from '../connection.ts';
import { runEtcdutl, snapshotFileStatus } from '../etcdutl.ts';
import { compareHashKV } from '../health/hash-kv.ts';
import { planRestore, type RestoreMember } from '../restore/restore-plan.ts';
import { runRestore } from '../restore/run-restore.ts';
import { fileSnapshotSink } from './file-sink.ts';
import type { BackupRecord, SnapshotSink } from './snapshot-sink.ts';
import { takeBackup } from './take-backup.ts';

let source: EtcdTestCluster;
let restored: EtcdTestCluster | undefined;
let backupDir: string;
const etcdutl = binaryPath('etcdutl');

beforeAll(async () => {
  source = await startEtcdCluster({ size: 3, namePrefix: 'source' });
  backupDir = await mkdtemp(join(tmpdir(), 'homeostat-etcd-backups-'));
});
afterAll(async () => {
  await restored?.stop();
  await source.stop();
  await rm(backupDir, { recursive: true, force: true });
});

/** Every key and value at `revision`, read from the source cluster's history. */
async function keyspaceAt(connection: EtcdConnection, revision: string): Promise<Map<string, string>> {
  const client = openClient(connection);
  try {
    const all = await client.kv.range({ key: Buffer.from('\0'), range_end: Buffer.from('\0'), revision });
    return new Map(all.kvs.map((kv) => [kv.key.toString(), kv.value.toString()]));
  } finally {
    client.close();
  }
}

async function restoreMembers(cluster: EtcdTestCluster, count: number): Promise<RestoreMember[]> {
  const members: RestoreMember[] = [];
  for (let i = 0; i < count; i++) {
    const a = await cluster.address(`restored-${i}`);
    members.push({ name: a.name, peerUrl: a.peerUrl, clientUrl: a.clientUrl, dataDir: a.dataDir });
  }
  return members;
}

describe('backup and restore on real etcd processes', () => {
  let record: BackupRecord;
  let connection: EtcdConnection;

  it('takes a verified, etcdctl-compatible snapshot under write load', async () => {
    connection = { endpoints: source.clientUrls() };
    const client = openClient(connection);
    for (let i = 0; i < 200; i++) await client.put(`base/${i}`).value(`base value ${i}`);
    let writing = true;
    let written = 0;
    const load = (async () => {
      while (writing) await client.put(`load/${written++}`).value(`load value ${written}`.repeat(20));
    })();
    try {
      // Let the load run a moment first, so the snapshot is cut in the middle of it.
      while (written < 100) await sleep(20);
      record = await takeBackup(connection, fileSnapshotSink(backupDir), { name: 'under-load.db' });
    } finally {
      writing = false;
      await load;
      client.close();
    }
    const bytes = await readFile(record.location);
    expect(record.sizeBytes).toBe(bytes.length);
    expect(bytes.length % 512).toBe(32);
    const database = bytes.subarray(0, bytes.length - 32);
    expect(createHash('sha256').update(database).digest('hex')).toBe(record.sha256);
    expect(bytes.subarray(bytes.length - 32).toString('hex')).toBe(record.sha256);
    expect(record.revisionExact).toBe(true);
    expect(BigInt(record.revision)).toBeGreaterThan(300n);
    expect(written).toBeGreaterThan(100);
    expect(record.memberName).toMatch(/^source-\d$/);
    expect(existsSync(`${record.location}.partial`)).toBe(false);
    // The record next to the file, with the exact revision read from the file's pages: the one
    // etcdutl reads from the whole database, though the snapshot was cut in the middle of writes.
    const recorded = JSON.parse(await readFile(`${record.location}.json`, 'utf8')) as BackupRecord;
    expect(recorded).toEqual(record);
    expect(recorded.revisionExact).toBe(true);
    expect(recorded.revision).toBe((await snapshotFileStatus(etcdutl, record.location)).revision);
  });

  it('refuses, and commits nothing, rather than record a lower-bound revision for a file it has', async () => {
    // A sink whose local copy is not the database (a bug, or a disk that lost it) has no revision.
    const files = fileSnapshotSink(backupDir);
    const unreadable = join(backupDir, 'not-a-database');
    await writeFile(unreadable, 'not a bbolt file');
    const sink: SnapshotSink = {
      async create(name) {
        return { ...(await files.create(name)), localPath: unreadable };
      },
    };
    await expect(takeBackup(connection, sink, { name: 'no-revision.db' })).rejects.toMatchObject({
      reason: 'SnapshotRevisionUnreadable',
      message: expect.stringContaining(unreadable),
    });
    for (const leftover of ['no-revision.db', 'no-revision.db.partial', 'no-revision.db.json']) {
      expect(existsSync(join(backupDir, leftover)), leftover).toBe(false);
    }
  });

  it('restores into a new three-member cluster with every key and value, and equal hashKV', async () => {
    restored = await startEtcdCluster({ size: 0, namePrefix: 'restored' });
    const members = await restoreMembers(restored, 3);
    const plan = planRestore({
      snapshotPath: record.location,
      members,
      clusterToken: 'restored-cluster',
      etcdutlPath: etcdutl,
    });
    expect(plan.steps.flatMap((s) => s.args)).not.toContain('--skip-hash-check');
    const verified = await runRestore(plan, { expectedSha256: record.sha256 });
    expect(verified.sha256).toBe(record.sha256);

    const join = {
      initialCluster: plan.initialCluster,
      initialClusterState: 'new' as const,
      initialClusterToken: plan.clusterToken,
    };
    const target = restored;
    await Promise.all(members.map((m) => target.start(m, join)));

    const expected = await keyspaceAt(connection, record.revision);
    expect(expected.size).toBeGreaterThan(300);
    const restoredConnection = { endpoints: members.map((m) => m.clientUrl) };
    for (const m of members) {
      const actual = await withMemberClient(restoredConnection, m.clientUrl, async (c) => {
        const all = await c.kv.range({ key: Buffer.from('\0'), range_end: Buffer.from('\0') });
        expect(all.header.revision, `revision served by ${m.name}`).toBe(record.revision);
        return new Map(all.kvs.map((kv) => [kv.key.toString(), kv.value.toString()]));
      });
      expect(actual.size, `keys on ${m.name}`).toBe(expected.size);
      expect(Object.fromEntries(actual)).toEqual(Object.fromEntries(expected));
    }
    const comparison = await compareHashKV(
      restoredConnection,
      members.map((m) => m.clientUrl),
      record.revision,
    );
    expect(comparison.hashes.size).toBe(3);
    expect(
      comparison.consistent,
      `hashKV on restored members: ${JSON.stringify([...comparison.hashes])}`,
    ).toBe(true);
  });

  it('refuses a snapshot with one byte changed and leaves no data dir; etcdutl agrees', async () => {
    const original = await readFile(record.location);
    const corrupt = Buffer.from(original);
    const offset = Math.floor(corrupt.length / 2);
    corrupt[offset] = (corrupt[offset] ?? 0) ^ 0x01;
    const corruptPath = join(backupDir, 'one-byte-changed.db');
    await writeFile(corruptPath, corrupt);

    const scratch = await startEtcdCluster({ size: 0, namePrefix: 'never' });
    try {
      const members = await restoreMembers(scratch, 1);
      const plan = planRestore({
        snapshotPath: corruptPath,
        members,
        clusterToken: 't',
        etcdutlPath: etcdutl,
      });
      await expect(runRestore(plan)).rejects.toMatchObject({
        reason: 'SnapshotHashMismatch',
        message: expect.stringMatching(/sha256 of the first \d+ bytes is [0-9a-f]{64}, but the trailer says/),
      });
      expect(existsSync(members[0]?.dataDir ?? '')).toBe(false);

      // The same refusal from etcdutl itself: our check and etcd's agree on what is corrupt.
      await expect(runEtcdutl(etcdutl, plan.steps[0]?.args ?? [])).rejects.toThrow(
        /hash mismatch|expected sha256/i,
      );

      // A truncated file and a valid file that is not the recorded one are refused too.
      const truncatedPath = join(backupDir, 'truncated.db');
      await writeFile(truncatedPath, original.subarray(0, original.length - 100));
      const truncated = planRestore({
        snapshotPath: truncatedPath,
        members,
        clusterToken: 't',
        etcdutlPath: etcdutl,
      });
      await expect(runRestore(truncated)).rejects.toMatchObject({ reason: 'SnapshotMalformed' });
      const wrongRecord = planRestore({
        snapshotPath: record.location,
        members,
        clusterToken: 't',
        etcdutlPath: etcdutl,
      });
      await expect(runRestore(wrongRecord, { expectedSha256: '0'.repeat(64) })).rejects.toMatchObject({
        reason: 'SnapshotHashMismatch',
      });
      expect((await stat(record.location)).size).toBe(original.length);
    } finally {
      await scratch.stop();
    }
  });
});
