// The restore agent's steps on real things: a snapshot of a real etcd member in a real
// S3-compatible server (versitygw), the real etcdutl between fetch and finish. Each step is run
// again, as the kubelet does when it makes a pod's sandbox again, and must neither download again
// nor replace data the member already has.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { binaryPath, repoRoot } from '@homeostat/testing';
import { startEtcdCluster, type EtcdTestCluster } from '@homeostat/testing/etcd';
import { startS3Server, type S3TestServer } from '@homeostat/testing/s3';
import { openClient } from '../connection.ts';
import { runEtcdutl } from '../etcdutl.ts';
import {
  fetchSnapshot,
  finishRestore,
  snapshotFile,
  stagingDir,
  type FetchRequest,
  type RestorePaths,
} from './restore-agent.ts';
import { openS3Store, type SnapshotStore } from './s3-store.ts';
import type { BackupRecord } from './snapshot-sink.ts';
import { takeBackup } from './take-backup.ts';

const execFileAsync = promisify(execFile);
const bucket = 'backups';
let etcd: EtcdTestCluster;
let server: S3TestServer;
let store: SnapshotStore;
let record: BackupRecord;
let volume: string;

beforeAll(async () => {
  [etcd, server] = await Promise.all([startEtcdCluster({ size: 1 }), startS3Server({ buckets: [bucket] })]);
  store = await openS3Store({
    bucket,
    region: server.region,
    endpoint: server.endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey },
  });
  const client = openClient({ endpoints: etcd.clientUrls() });
  for (let i = 0; i < 50; i++) await client.put(`k/${i}`).value(`v${i}`);
  client.close();
  record = await takeBackup({ endpoints: etcd.clientUrls() }, store, { name: 'snap.db' });
  volume = await mkdtemp(join(tmpdir(), 'homeostat-restore-volume-'));
});

afterAll(async () => {
  store?.close();
  await Promise.all([etcd?.stop(), server?.stop()]);
  await rm(volume, { recursive: true, force: true });
});

const request = (paths: { dataDir: string; workDir: string }, sha256 = record.sha256): FetchRequest => ({
  ...paths,
  bucket,
  key: 'snap.db',
  region: server.region,
  endpoint: server.endpoint,
  forcePathStyle: true,
  expectedSha256: sha256,
  credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey },
});

const etcdutlRestore = (paths: RestorePaths) =>
  runEtcdutl(binaryPath('etcdutl'), [
    'snapshot',
    'restore',
    snapshotFile(paths),
    '--name=m-0',
    '--initial-cluster=m-0=http://127.0.0.1:1',
    '--initial-advertise-peer-urls=http://127.0.0.1:1',
    `--data-dir=${stagingDir(paths)}`,
  ]);

describe('the restore agent (init containers of a restored member)', () => {
  it('fetches, verifies and moves into place; run again, it neither downloads nor replaces member data', async () => {
    const paths = { dataDir: join(volume, 'data'), workDir: join(volume, 'restore') };
    const lines: string[] = [];
    await fetchSnapshot(request(paths), (l) => lines.push(l));
    expect((await readFile(snapshotFile(paths))).length).toBe(record.sizeBytes);
    await etcdutlRestore(paths);
    await finishRestore(paths, (l) => lines.push(l));
    expect(existsSync(join(paths.dataDir, 'member', 'snap', 'db'))).toBe(true);
    expect(existsSync(stagingDir(paths))).toBe(false);

    // The member has run since: its data is newer than the backup and must survive a rerun.
    await writeFile(join(paths.dataDir, 'member', 'written-after-restore'), 'newer');
    await store.delete('snap.db'); // a second download would now fail
    await fetchSnapshot(request(paths), (l) => lines.push(l));
    await etcdutlRestore(paths);
    await finishRestore(paths, (l) => lines.push(l));
    expect(await readFile(join(paths.dataDir, 'member', 'written-after-restore'), 'utf8')).toBe('newer');
    expect(existsSync(stagingDir(paths))).toBe(false);
    expect(lines).toEqual([
      expect.stringMatching(/^fetched s3:\/\/backups\/snap\.db: \d+ bytes, sha256 [0-9a-f]{64}$/),
      `restored data moved to ${paths.dataDir}`,
      `${snapshotFile(paths)} present and verified; not downloading again`,
      `${paths.dataDir} already holds member data; the restored copy is discarded`,
    ]);
  });

  it('refuses a snapshot whose sha256 is not the recorded one, leaving no file behind', async () => {
    const other = await mkdtemp(join(tmpdir(), 'homeostat-restore-volume-'));
    try {
      const paths = { dataDir: join(other, 'data'), workDir: join(other, 'restore') };
      await takeBackup({ endpoints: etcd.clientUrls() }, store, { name: 'snap.db' });
      await expect(fetchSnapshot(request(paths, '0'.repeat(64)), () => undefined)).rejects.toThrow(
        /but the backup record says 0{64}/,
      );
      expect(existsSync(snapshotFile(paths))).toBe(false);
      expect(existsSync(`${snapshotFile(paths)}.partial`)).toBe(false);
    } finally {
      await rm(other, { recursive: true, force: true });
    }
  });

  it('with member data and no snapshot, the init containers need neither the backup nor credentials', async () => {
    // A node reboot runs a restored member's init containers again, perhaps after the backup was
    // pruned and its Secret rotated (the pod's references to it are optional).
    const paths = { dataDir: join(volume, 'reboot', 'data'), workDir: join(volume, 'reboot', 'restore') };
    const again = await takeBackup({ endpoints: etcd.clientUrls() }, store, { name: 'reboot.db' });
    await fetchSnapshot({ ...request(paths, again.sha256), key: 'reboot.db' }, () => undefined);
    await etcdutlRestore(paths);
    await finishRestore(paths, () => undefined);
    await writeFile(join(paths.dataDir, 'member', 'written-after-restore'), 'newer');
    await rm(snapshotFile(paths));
    await store.delete('reboot.db');

    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('AWS_')));
    const args = [
      'fetch-backup',
      `--data-dir=${paths.dataDir}`,
      `--work-dir=${paths.workDir}`,
      `--bucket=${bucket}`,
      '--key=reboot.db',
      `--region=${server.region}`,
      `--endpoint=${server.endpoint}`,
      '--force-path-style=true',
      `--sha256=${again.sha256}`,
    ];
    const { stderr } = await execFileAsync(
      process.execPath,
      [join(repoRoot, 'operators', 'etcd', 'src', 'main.ts'), ...args],
      { env },
    );
    expect(stderr).toContain(`${paths.dataDir} already holds member data; no backup fetched`);
    // The next init containers, with no snapshot left: etcdutl must not fail on a missing file
    // (its image has no shell to guard it), and the member's data stays as it was.
    await etcdutlRestore(paths);
    await finishRestore(paths, () => undefined);
    expect(existsSync(snapshotFile(paths))).toBe(false);
    expect(existsSync(stagingDir(paths))).toBe(false);
    expect(await readFile(join(paths.dataDir, 'member', 'written-after-restore'), 'utf8')).toBe('newer');
  });
});
