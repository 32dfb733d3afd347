import { describe, expect, it } from 'vitest';
import { grpcRequestBody } from './grpc-wire.ts';
import { SnapshotBlobReader } from './snapshot-blob-reader.ts';

// A minimal protobuf writer, enough to build the messages etcd sends (and some it might).
const varint = (value: number): number[] => {
  const out: number[] = [];
  let v = value;
  while (v >= 0x80) {
    out.push((v % 0x80) | 0x80);
    v = Math.floor(v / 0x80);
  }
  out.push(v);
  return out;
};
const tag = (field: number, type: number) => varint(field * 8 + type);
const lengthField = (field: number, bytes: Buffer) => [...tag(field, 2), ...varint(bytes.length), ...bytes];
const header = Buffer.from([...tag(1, 0), ...varint(123), ...tag(3, 0), ...varint(77)]);

/** A SnapshotResponse as etcd writes it: header, remaining_bytes, blob, and version when given. */
function response(blob: Buffer, remaining: number, version?: string): Buffer {
  return Buffer.from([
    ...lengthField(1, header),
    ...tag(2, 0),
    ...varint(remaining),
    ...lengthField(3, blob),
    ...(version ? lengthField(4, Buffer.from(version)) : []),
  ]);
}

const body = (...messages: Buffer[]) => Buffer.concat(messages.map((m) => grpcRequestBody(m)));

/** Feeds `data` cut at `cuts`; returns the blob bytes given back, the version, and whether it ended cleanly. */
function readCut(data: Buffer, cuts: number[], reader = new SnapshotBlobReader()) {
  const blobs: Buffer[] = [];
  let from = 0;
  for (const at of [...cuts, data.length]) {
    reader.push(data.subarray(from, at), (blob) => blobs.push(Buffer.from(blob)));
    from = at;
  }
  return { bytes: Buffer.concat(blobs), version: reader.version, complete: reader.atMessageBoundary };
}

describe('SnapshotBlobReader', () => {
  const first = Buffer.alloc(300, 'first blob ');
  const second = Buffer.alloc(40_000, 'second blob ');
  const stream = body(
    response(first, 40_032),
    Buffer.alloc(0),
    response(second, 32, '3.6.0'),
    response(Buffer.alloc(32, 7), 0),
  );
  const expected = Buffer.concat([first, second, Buffer.alloc(32, 7)]);

  it('gives back every blob byte in order, wherever the frames cut the body', () => {
    expect(readCut(stream, [])).toEqual({ bytes: expected, version: '3.6.0', complete: true });
    // Every single cut point, and every point cut twice in a row (one-byte chunks included).
    for (let at = 1; at < 420; at++) {
      expect(readCut(stream, [at]), `cut at ${at}`).toEqual({
        bytes: expected,
        version: '3.6.0',
        complete: true,
      });
      expect(readCut(stream, [at, at + 1, at + 3]).bytes.equals(expected), `cuts at ${at}`).toBe(true);
    }
    const oneByteChunks = Array.from({ length: stream.length - 1 }, (_, i) => i + 1);
    expect(readCut(stream, oneByteChunks)).toEqual({ bytes: expected, version: '3.6.0', complete: true });
  });

  it('hands on views of the chunks, not copies, for a blob inside one chunk', () => {
    const views: Buffer[] = [];
    const chunk = body(response(first, 0));
    new SnapshotBlobReader().push(chunk, (blob) => views.push(blob));
    expect(views).toHaveLength(1);
    expect(views[0]?.buffer).toBe(chunk.buffer);
  });

  it('skips fields it does not know, of every wire type protobuf 3 writes', () => {
    const message = Buffer.from([
      ...tag(9, 1),
      ...Buffer.alloc(8),
      ...tag(10, 5),
      ...Buffer.alloc(4),
      ...lengthField(11, Buffer.from('future field')),
      ...tag(12, 0),
      ...varint(2 ** 40),
      ...lengthField(3, Buffer.from('bbolt page bytes')),
    ]);
    const data = body(message);
    for (let at = 1; at < data.length; at++)
      expect(readCut(data, [at]).bytes.toString(), `cut at ${at}`).toBe('bbolt page bytes');
  });

  it('says a body cut inside a message is not complete', () => {
    expect(readCut(stream.subarray(0, stream.length - 10), [7]).complete).toBe(false);
    expect(readCut(stream.subarray(0, 3), []).complete).toBe(false);
  });

  it('refuses compressed messages, lengths over the limit, fields past the message and unknown wire types', () => {
    const compressed = body(response(first, 0));
    compressed[0] = 1;
    expect(() => readCut(compressed, [])).toThrow(/compressed \(flag 1\)/);
    expect(() => readCut(body(Buffer.alloc(11)), [], new SnapshotBlobReader(10))).toThrow(
      /11 bytes is over the 10-byte limit/,
    );
    expect(() => readCut(body(Buffer.from([...tag(3, 2), ...varint(10), 1, 2])), [])).toThrow(
      /field 3 of 10 bytes runs past the message's end/,
    );
    expect(() => readCut(body(Buffer.from([...tag(2, 0), 0x80])), [])).toThrow(/ends inside a varint/);
    expect(() => readCut(body(Buffer.from(tag(5, 3))), [])).toThrow(/wire type 3/);
  });
});
