// A stream uploaded as one object with S3's multipart upload, over TLS to the test server: the
// baseline bench:backup compares pgBackRest with when both must end in the same bucket
// (`pg_basebackup -Ft -D - | this`). Parts of 8 MiB, two in flight, so reading goes on while a
// part is sent, as pgBackRest reads the next file while the last is being written.
import { Agent } from 'node:https';
import { readFileSync } from 'node:fs';
import type { Readable } from 'node:stream';
import {
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import type { S3TestServer } from '@homeostat/testing/s3';

const partBytes = 8 * 1024 * 1024;
const inFlight = 2;

/** Uploads everything `stream` yields to `bucket`/`key`; resolves with the bytes stored. */
export async function streamToBucket(
  s3: S3TestServer,
  bucket: string,
  key: string,
  stream: Readable,
): Promise<number> {
  const client = new S3Client({
    region: s3.region,
    endpoint: s3.endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
    requestHandler: {
      httpsAgent: new Agent({ keepAlive: true, ...(s3.caFile ? { ca: readFileSync(s3.caFile) } : {}) }),
    },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  try {
    const { UploadId } = await client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: key }));
    const parts: { ETag: string; PartNumber: number }[] = [];
    const sending = new Set<Promise<void>>();
    let bytes = 0;
    const send = async (Body: Buffer, PartNumber: number) => {
      const answer = await client.send(
        new UploadPartCommand({ Bucket: bucket, Key: key, UploadId, PartNumber, Body }),
      );
      parts.push({ ETag: answer.ETag ?? '', PartNumber });
    };
    let partNumber = 0;
    const queue = async (body: Buffer) => {
      if (sending.size >= inFlight) await Promise.race(sending);
      partNumber++;
      const p: Promise<void> = send(body, partNumber).finally(() => sending.delete(p));
      sending.add(p);
    };
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      pending.push(chunk);
      pendingBytes += chunk.length;
      bytes += chunk.length;
      if (pendingBytes >= partBytes) {
        await queue(Buffer.concat(pending, pendingBytes));
        pending = [];
        pendingBytes = 0;
      }
    }
    if (pendingBytes > 0 || partNumber === 0) await queue(Buffer.concat(pending, pendingBytes));
    await Promise.all(sending);
    parts.sort((a, b) => a.PartNumber - b.PartNumber);
    await client.send(
      new CompleteMultipartUploadCommand({
        Bucket: bucket,
        Key: key,
        UploadId,
        MultipartUpload: { Parts: parts },
      }),
    );
    return bytes;
  } finally {
    client.destroy();
  }
}
