// The direct HTTP/2 snapshot reader against real etcd members: one plaintext, one serving clients
// over TLS with client certificates (as the operator's clusters do), and auth with a token.
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { binaryPath, freeLoopbackPort } from '@homeostat/testing';
import { startEtcdCluster, type EtcdTestCluster } from '@homeostat/testing/etcd';
import { openClient, type EtcdConnection } from '../connection.ts';
import { snapshotFileStatus } from '../etcdutl.ts';
import { verifySnapshotFile } from '../restore/verify-snapshot-file.ts';
import { fileSnapshotSink } from './file-sink.ts';
import { readSnapshotStream, SnapshotStreamError, type SnapshotStreamRequest } from './snapshot-stream.ts';
import { SnapshotTrailerVerifier } from './snapshot-trailer.ts';
import { takeBackup } from './take-backup.ts';

const etcdutl = binaryPath('etcdutl');
let plain: EtcdTestCluster;
let secure: EtcdTestCluster;
let work: string;
let tlsConnection: EtcdConnection;

/** Writes `count` keys of 4 KiB, so a snapshot spans many messages and HTTP/2 windows. */
async function fill(connection: EtcdConnection, count: number): Promise<void> {
  const client = openClient(connection);
  try {
    const value = Buffer.alloc(4096, 'snapshot-stream-');
    for (let i = 0; i < count; i += 50)
      await Promise.all(
        Array.from({ length: 50 }, (_, j) =>
          client.put(`key/${String(i + j).padStart(6, '0')}`).value(value),
        ),
      );
  } finally {
    client.close();
  }
}

/** Streams a snapshot into a file, checking its trailer; returns the file and what the stream said. */
async function streamToFile(request: SnapshotStreamRequest, name: string) {
  const verifier = new SnapshotTrailerVerifier();
  const blobs: Buffer[] = [];
  const end = await readSnapshotStream(request, (blob) => {
    verifier.update(blob);
    blobs.push(blob);
  });
  const path = join(work, name);
  await writeFile(path, Buffer.concat(blobs));
  return { path, end, verified: verifier.finish(path) };
}

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'homeostat-snapshot-stream-'));
  [plain, secure] = await Promise.all([
    startEtcdCluster({ namePrefix: 'plain' }),
    startEtcdCluster({ namePrefix: 'secure', clientTls: true }),
  ]);
  const tls = secure.clientTls;
  if (!tls) throw new Error('the TLS cluster has no client TLS files');
  tlsConnection = {
    endpoints: secure.clientUrls(),
    credentials: {
      rootCertificate: await readFile(tls.ca),
      certChain: await readFile(tls.client.cert),
      privateKey: await readFile(tls.client.key),
    },
  };
  await Promise.all([fill({ endpoints: plain.clientUrls() }, 1000), fill(tlsConnection, 1000)]);
});
afterAll(async () => {
  await Promise.all([plain?.stop(), secure?.stop()]);
  await rm(work, { recursive: true, force: true });
});

describe('snapshot stream over HTTP/2 from real etcd', () => {
  it('streams a plaintext member snapshot that etcdutl reads, with a verified sha256 trailer', async () => {
    const [clientUrl] = plain.clientUrls();
    const { path, end, verified } = await streamToFile({ clientUrl: clientUrl ?? '' }, 'plain.db');
    expect(clientUrl).toMatch(/^http:/);
    // 1000 keys of 4 KiB: the stream crossed the 4 MiB window and many messages.
    expect(end.bytes).toBeGreaterThan(4 * 1024 * 1024);
    expect(end.bytes).toBe(verified.sizeBytes);
    expect(end.version).toMatch(/^3\.\d+\.\d+$/);
    expect((await verifySnapshotFile(path, verified.sha256)).sha256).toBe(verified.sha256);
    const status = await snapshotFileStatus(etcdutl, path);
    expect(status.totalKeys).toBeGreaterThanOrEqual(1000);
  });

  it('waits for a sink that is behind, and gives every blob once and in order', async () => {
    const [clientUrl] = plain.clientUrls();
    const verifier = new SnapshotTrailerVerifier();
    const blobs: Buffer[] = [];
    let waits = 0;
    let writing = false;
    const end = await readSnapshotStream({ clientUrl: clientUrl ?? '' }, (blob) => {
      // A blob handed over while the previous write is still pending would break the order.
      expect(writing).toBe(false);
      verifier.update(blob);
      blobs.push(Buffer.from(blob));
      if (blobs.length % 7 !== 0) return undefined;
      waits++;
      writing = true;
      return new Promise<void>((resolve) =>
        setTimeout(() => {
          writing = false;
          resolve();
        }, 1),
      );
    });
    expect(waits).toBeGreaterThan(10);
    // A blob lost, repeated or out of order would not hash to etcd's trailer.
    expect(verifier.finish('slow sink').sizeBytes).toBe(end.bytes);
    expect(Buffer.concat(blobs).length).toBe(end.bytes);
  });

  it('streams over TLS with a client certificate, and takeBackup uses it for the whole backup', async () => {
    const [clientUrl] = secure.clientUrls();
    expect(clientUrl).toMatch(/^https:/);
    const { path, verified } = await streamToFile(
      {
        clientUrl: clientUrl ?? '',
        ...(tlsConnection.credentials ? { credentials: tlsConnection.credentials } : {}),
      },
      'secure.db',
    );
    expect((await snapshotFileStatus(etcdutl, path)).totalKeys).toBeGreaterThanOrEqual(1000);
    expect(verified.sizeBytes).toBeGreaterThan(4 * 1024 * 1024);

    const record = await takeBackup(tlsConnection, fileSnapshotSink(join(work, 'backups')), {
      name: 'secure-backup.db',
    });
    expect(record.revisionExact).toBe(true);
    expect(record.memberName).toBe('secure-0');
    expect((await verifySnapshotFile(record.location, record.sha256)).sizeBytes).toBe(record.sizeBytes);
  });

  it('fails with the member and the TLS cause when the client has no certificate', async () => {
    const [clientUrl] = secure.clientUrls();
    const withoutCert = { rootCertificate: tlsConnection.credentials?.rootCertificate ?? Buffer.alloc(0) };
    const error = await readSnapshotStream(
      { clientUrl: clientUrl ?? '', credentials: withoutCert },
      () => {},
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SnapshotStreamError);
    expect(String((error as Error).message)).toContain(`snapshot stream from ${clientUrl}`);
    expect((error as Error).message).toMatch(/certificate|handshake|alert|reset|closed/i);
  });

  it('fails with the URL and the connection error when nothing listens', async () => {
    const clientUrl = `http://127.0.0.1:${await freeLoopbackPort()}`;
    await expect(readSnapshotStream({ clientUrl }, () => {})).rejects.toThrow(
      new RegExp(`snapshot stream from ${clientUrl}: connection failed: .*ECONNREFUSED`),
    );
  });

  it('stops when its AbortSignal fires, and takeBackup leaves no file behind', async () => {
    const [clientUrl] = plain.clientUrls();
    const controller = new AbortController();
    let blobs = 0;
    const reason = new Error('the backup was cancelled');
    await expect(
      readSnapshotStream({ clientUrl: clientUrl ?? '', signal: controller.signal }, () => {
        if (++blobs === 3) controller.abort(reason);
      }),
    ).rejects.toBe(reason);
    expect(blobs).toBeLessThan(20);

    const dir = join(work, 'aborted');
    const backup = new AbortController();
    const sink = fileSnapshotSink(dir);
    const cancelling = takeBackup(
      { endpoints: plain.clientUrls() },
      {
        async create(name) {
          const upload = await sink.create(name);
          let written = 0;
          return {
            ...upload,
            localPath: upload.localPath,
            async write(chunk) {
              if ((written += chunk.length) > 1024 * 1024) backup.abort(reason);
              await upload.write(chunk);
            },
          };
        },
      },
      { name: 'aborted.db', signal: backup.signal },
    );
    await expect(cancelling).rejects.toBe(reason);
    expect(await readdir(dir)).toEqual([]);
    expect(existsSync(join(dir, 'aborted.db'))).toBe(false);
  });

  it('sends the auth token etcd asks for once auth is on, and says what etcd answered without it', async () => {
    const connection: EtcdConnection = { endpoints: plain.clientUrls() };
    const client = openClient(connection);
    try {
      await client.role('root').create();
      await client.user('root').create('root-password');
      await client.user('root').addRole('root');
      await client.auth.authEnable();
    } finally {
      client.close();
    }
    const [clientUrl] = plain.clientUrls();
    const refused = await readSnapshotStream({ clientUrl: clientUrl ?? '' }, () => {}).catch(
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(SnapshotStreamError);
    expect((refused as SnapshotStreamError).grpcStatus).toBeGreaterThan(0);
    expect((refused as Error).message).toMatch(/etcd answered \d+ [A-Z_]+: etcdserver: /);

    const record = await takeBackup(
      { ...connection, auth: { username: 'root', password: 'root-password' } },
      fileSnapshotSink(join(work, 'backups')),
      { name: 'with-auth.db' },
    );
    expect((await snapshotFileStatus(etcdutl, record.location)).totalKeys).toBeGreaterThanOrEqual(1000);
  });
});
