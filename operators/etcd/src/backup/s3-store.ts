// Snapshots in an S3-compatible bucket. A snapshot is streamed as a multipart upload and becomes an
// object only at CompleteMultipartUpload, which is sent after the sha256 trailer has checked: a
// snapshot cut short (the operator killed mid-stream, a failed check) is an unfinished upload that
// no reader ever sees, and is aborted when the same backup is taken again.
//
// The AWS SDK is loaded on first use only (`import()`): an operator whose clusters take no S3
// backups never loads its modules (several MB of code, tens of MB of heap).
import { Readable } from 'node:stream';
import type * as S3Sdk from '@aws-sdk/client-s3';
import { s3CallError } from './s3-failure.ts';
import type { BackupRecord, SnapshotSink, SnapshotUpload } from './snapshot-sink.ts';

/** Where and how to reach a bucket; credentials come from a Secret and never reach logs or status. */
export interface S3Target {
  readonly bucket: string;
  /** Key prefix of every object, e.g. "prod/etcd/" (taken as given; no "/" is added). */
  readonly prefix?: string;
  readonly endpoint?: string;
  readonly region: string;
  readonly forcePathStyle: boolean;
  readonly credentials: {
    readonly accessKeyId: string;
    readonly secretAccessKey: string;
    readonly sessionToken?: string;
  };
}

/** A bucket holding snapshots: written through the sink, read back to restore, deleted by retention. */
export interface SnapshotStore extends SnapshotSink {
  /** `s3://bucket/key` of a snapshot name. */
  locationOf(name: string): string;
  /** The object key of a snapshot name (prefix included). */
  keyOf(name: string): string;
  /** The snapshot's bytes in order; rejects when it does not exist. */
  read(key: string): Promise<AsyncIterable<Uint8Array>>;
  /** Deletes a snapshot and its record (absent ones are no error). */
  delete(key: string): Promise<void>;
  /** Aborts unfinished uploads of a key, left by an operator that died while streaming it. */
  abortUnfinished(key: string): Promise<number>;
  /** Releases connections. */
  close(): void;
}

// S3 parts are at least 5 MiB (but the last); 8 MiB parts keep one part in memory at a time and a
// 1 GiB snapshot at 128 parts, far below the 10 000-part limit.
const partBytes = 8 * 1024 * 1024;

let sdk: Promise<typeof S3Sdk> | undefined;
const loadSdk = () => (sdk ??= import('@aws-sdk/client-s3'));

/** Opens a bucket as a snapshot store. */
export async function openS3Store(target: S3Target): Promise<SnapshotStore> {
  const s3 = await loadSdk();
  const client: S3Sdk.S3Client = new s3.S3Client({
    region: target.region,
    forcePathStyle: target.forcePathStyle,
    credentials: { ...target.credentials },
    ...(target.endpoint ? { endpoint: target.endpoint } : {}),
    // Checksums only when an operation requires them: S3-compatible servers differ in what they accept.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  const Bucket = target.bucket;
  const keyOf = (name: string) => `${target.prefix ?? ''}${name}`;
  /** Every call goes through here: a failure says what the client knows, never the server's text (s3-failure.ts). */
  const call = async <T>(operation: string, Key: string, send: () => Promise<T>): Promise<T> => {
    try {
      return await send();
    } catch (error) {
      throw s3CallError(operation, `s3://${Bucket}/${Key}`, error);
    }
  };

  async function create(name: string, options: { signal?: AbortSignal } = {}): Promise<SnapshotUpload> {
    const Key = keyOf(name);
    // Every call of this upload stops when the signal aborts, a request already on the wire too.
    const sendOptions = options.signal ? { abortSignal: options.signal } : {};
    const started = await call('CreateMultipartUpload', Key, () =>
      client.send(new s3.CreateMultipartUploadCommand({ Bucket, Key }), sendOptions),
    );
    const UploadId = started.UploadId ?? '';
    const parts: { ETag: string; PartNumber: number }[] = [];
    let pending: Uint8Array[] = [];
    let pendingBytes = 0;
    const sendPart = async () => {
      if (pendingBytes === 0) return;
      const Body = Buffer.concat(pending, pendingBytes);
      pending = [];
      pendingBytes = 0;
      const PartNumber = parts.length + 1;
      const answer = await call(`UploadPart ${PartNumber}`, Key, () =>
        client.send(new s3.UploadPartCommand({ Bucket, Key, UploadId, PartNumber, Body }), sendOptions),
      );
      parts.push({ ETag: answer.ETag ?? '', PartNumber });
    };
    return {
      localPath: undefined,
      // A promise only when a part goes out: the stream then waits for it, and otherwise goes on
      // without a promise round per chunk.
      write(chunk) {
        pending.push(chunk);
        pendingBytes += chunk.length;
        return pendingBytes >= partBytes ? sendPart() : undefined;
      },
      // Nothing is read back locally; parts go out as they fill.
      async flush() {},
      async commit(record: Omit<BackupRecord, 'location'>) {
        await sendPart();
        await call('CompleteMultipartUpload', Key, () =>
          client.send(
            new s3.CompleteMultipartUploadCommand({
              Bucket,
              Key,
              UploadId,
              MultipartUpload: { Parts: parts },
            }),
            sendOptions,
          ),
        );
        const location = `s3://${Bucket}/${Key}`;
        await call('PutObject', `${Key}.json`, () =>
          client.send(
            new s3.PutObjectCommand({
              Bucket,
              Key: `${Key}.json`,
              Body: `${JSON.stringify({ location, ...record }, null, 2)}\n`,
              ContentType: 'application/json',
            }),
            sendOptions,
          ),
        );
        return location;
      },
      async abort() {
        await client
          .send(new s3.AbortMultipartUploadCommand({ Bucket, Key, UploadId }))
          .catch(() => undefined);
      },
    };
  }

  return {
    create,
    keyOf,
    locationOf: (name) => `s3://${Bucket}/${keyOf(name)}`,
    async read(Key) {
      const answer = await call('GetObject', Key, () =>
        client.send(new s3.GetObjectCommand({ Bucket, Key })),
      );
      // In Node the SDK answers with a Readable (typed as a union of every runtime's streams).
      if (!(answer.Body instanceof Readable)) throw new Error(`s3://${Bucket}/${Key}: no readable body`);
      return answer.Body;
    },
    async delete(Key) {
      await call('DeleteObject', Key, () => client.send(new s3.DeleteObjectCommand({ Bucket, Key })));
      await call('DeleteObject', `${Key}.json`, () =>
        client.send(new s3.DeleteObjectCommand({ Bucket, Key: `${Key}.json` })),
      );
    },
    async abortUnfinished(Key) {
      const listed = await call('ListMultipartUploads', Key, () =>
        client.send(new s3.ListMultipartUploadsCommand({ Bucket, Prefix: Key })),
      );
      const mine = (listed.Uploads ?? []).filter((u) => u.Key === Key && u.UploadId);
      for (const upload of mine) {
        await call('AbortMultipartUpload', Key, () =>
          client.send(new s3.AbortMultipartUploadCommand({ Bucket, Key, UploadId: upload.UploadId })),
        );
      }
      return mine.length;
    },
    close: () => client.destroy(),
  };
}
