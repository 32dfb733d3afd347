// The snapshot store against a real S3 server (versitygw) and against endpoints that are not one.
// A part changed on its way is refused by the server (the request signature covers the payload's
// SHA-256, so no snapshot is ever stored with bytes other than the ones sent), and whatever a
// hostile or mistaken endpoint answers never reaches the error the operator reports: the endpoint
// is the user's, the network position the operator's (s3-failure.ts).
import { existsSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { connect, createServer, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freeLoopbackPort } from '@homeostat/testing';
import { startS3Server, type S3TestServer } from '@homeostat/testing/s3';
import { S3CallError } from './s3-failure.ts';
import { openS3Store, type SnapshotStore } from './s3-store.ts';
import type { BackupRecord } from './snapshot-sink.ts';

const bucket = 'backups';
const secretText = 'db-password=hunter2';
const record: Omit<BackupRecord, 'location'> = {
  sizeBytes: 9 * 1024 * 1024,
  sha256: '0'.repeat(64),
  revision: '1',
  revisionExact: false,
  memberId: '1',
  memberName: 'orders-0',
  etcdVersion: '3.6.0',
  startedAt: new Date().toISOString(),
  finishedAt: new Date().toISOString(),
};
let server: S3TestServer;
const closers: (() => unknown)[] = [];

beforeAll(async () => {
  server = await startS3Server({ buckets: [bucket] });
});
afterAll(async () => {
  for (const close of closers.reverse()) await close();
  await server?.stop();
});

const storeAt = (endpoint: string): Promise<SnapshotStore> =>
  openS3Store({
    bucket,
    region: server.region,
    endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey },
  });

/** Uploads one snapshot of 9 MiB (two parts) under `name`; resolves to what commit or a write threw. */
async function upload(store: SnapshotStore, name: string): Promise<unknown> {
  try {
    const upload = await store.create(name);
    await upload.write(new Uint8Array(9 * 1024 * 1024).fill(7));
    await upload.commit(record);
    return undefined;
  } catch (error) {
    return error;
  }
}

/** A loopback TCP proxy to the S3 server that flips one byte of the first part's body. */
async function corruptingProxy(): Promise<number> {
  const target = Number(new URL(server.endpoint).port);
  const proxy = createServer((from) => {
    const to = connect(target, '127.0.0.1');
    // Body bytes to pass before the one to flip: set once the first part's request head is seen.
    let untilFlip: number | undefined;
    let flipped = false;
    from.on('data', (chunk: Buffer) => {
      let bodyStart = 0;
      if (
        untilFlip === undefined &&
        !flipped &&
        /^PUT [^ ]*partNumber=1[&\s]/.test(chunk.toString('latin1', 0, 300))
      ) {
        bodyStart = chunk.indexOf('\r\n\r\n') + 4;
        untilFlip = 100;
      }
      if (untilFlip !== undefined && !flipped) {
        const at = bodyStart + untilFlip;
        if (at < chunk.length) {
          chunk[at] = (chunk[at] ?? 0) ^ 0xff;
          flipped = true;
        } else untilFlip -= chunk.length - bodyStart;
      }
      to.write(chunk);
    });
    to.on('data', (chunk) => from.write(chunk));
    for (const [a, b] of [
      [from, to],
      [to, from],
    ] as const) {
      a.on('error', () => b.destroy());
      a.on('close', () => b.destroy());
    }
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  closers.push(() => new Promise((resolve) => proxy.close(resolve)));
  return (proxy.address() as AddressInfo).port;
}

/** An HTTP server on loopback that answers every request with `status` and `body`. */
async function answering(status: number, body: string, contentType: string): Promise<string> {
  const http: Server = createHttpServer((request, response) => {
    request.resume();
    request.on('end', () => response.writeHead(status, { 'content-type': contentType }).end(body));
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  closers.push(() => new Promise((resolve) => http.close(resolve)));
  return `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
}

describe('S3 snapshot store on a real S3 server (versitygw) and on endpoints that are not one', () => {
  it('stores a snapshot sent whole, and refuses one whose part changed on the way', async () => {
    const direct = await storeAt(server.endpoint);
    closers.push(() => direct.close());
    expect(await upload(direct, 'whole.db')).toBeUndefined();
    expect(existsSync(server.objectPath(bucket, 'whole.db'))).toBe(true);

    const proxied = await storeAt(`http://127.0.0.1:${await corruptingProxy()}`);
    closers.push(() => proxied.close());
    const error = await upload(proxied, 'changed.db');
    expect(error).toBeInstanceOf(S3CallError);
    expect((error as S3CallError).message).toBe(
      `S3 UploadPart 1 s3://${bucket}/changed.db failed: XAmzContentSHA256Mismatch (HTTP 400)`,
    );
    expect(existsSync(server.objectPath(bucket, 'changed.db'))).toBe(false);
  });

  it('says what failed by code and HTTP status only, never what the endpoint answered', async () => {
    const s3Shaped = await answering(
      403,
      `<?xml version="1.0"?><Error><Code>AccessDenied</Code><Message>${secretText}</Message></Error>`,
      'application/xml',
    );
    const page = await answering(500, `<html><body>internal admin: ${secretText}</body></html>`, 'text/html');
    const refused = `http://127.0.0.1:${await freeLoopbackPort()}`;
    const seen: string[] = [];
    for (const endpoint of [s3Shaped, page, refused]) {
      const store = await storeAt(endpoint);
      closers.push(() => store.close());
      const error = await upload(store, 'snap.db');
      expect(error).toBeInstanceOf(S3CallError);
      const read = await store.read('snap.db').then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(read).toBeInstanceOf(S3CallError);
      seen.push((error as Error).message, (read as Error).message);
    }
    for (const message of seen) expect(message).not.toContain('hunter2');
    expect(seen).toEqual([
      `S3 CreateMultipartUpload s3://${bucket}/snap.db failed: AccessDenied (HTTP 403)`,
      `S3 GetObject s3://${bucket}/snap.db failed: AccessDenied (HTTP 403)`,
      `S3 CreateMultipartUpload s3://${bucket}/snap.db failed: Unrecognized (HTTP 500)`,
      `S3 GetObject s3://${bucket}/snap.db failed: Unrecognized (HTTP 500)`,
      `S3 CreateMultipartUpload s3://${bucket}/snap.db failed: ECONNREFUSED`,
      `S3 GetObject s3://${bucket}/snap.db failed: ECONNREFUSED`,
    ]);
  });
});
