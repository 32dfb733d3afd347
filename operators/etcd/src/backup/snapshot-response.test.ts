import { describe, expect, it } from 'vitest';
import { decodeSnapshotResponse } from './snapshot-response.ts';

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

describe('SnapshotResponse decoding', () => {
  it('reads blob, remaining_bytes and version, and skips the header and unknown fields', () => {
    const header = Buffer.from([...tag(1, 0), ...varint(123), ...tag(3, 0), ...varint(77)]);
    const blob = Buffer.from('bbolt page bytes');
    const message = Buffer.from([
      ...lengthField(1, header),
      ...tag(2, 0),
      ...varint(2 ** 40 + 5),
      ...lengthField(3, blob),
      ...lengthField(4, Buffer.from('3.6.0')),
      ...tag(9, 1),
      ...Buffer.alloc(8),
      ...tag(10, 5),
      ...Buffer.alloc(4),
      ...lengthField(11, Buffer.from('future field')),
    ]);
    const decoded = decodeSnapshotResponse(message);
    expect(decoded.blob.toString()).toBe('bbolt page bytes');
    expect(decoded.remainingBytes).toBe(2 ** 40 + 5);
    expect(decoded.version).toBe('3.6.0');
  });

  it('gives an empty blob, 0 remaining and no version for an empty message', () => {
    expect(decodeSnapshotResponse(Buffer.alloc(0))).toEqual({
      blob: Buffer.alloc(0),
      remainingBytes: 0,
      version: undefined,
    });
  });

  it('refuses truncated fields and wire types protobuf 3 never writes', () => {
    expect(() => decodeSnapshotResponse(Buffer.from([...tag(3, 2), ...varint(10), 1, 2]))).toThrow(
      /field of 10 bytes runs past its end/,
    );
    expect(() => decodeSnapshotResponse(Buffer.from([...tag(2, 0), 0x80]))).toThrow(/ends inside a varint/);
    expect(() => decodeSnapshotResponse(Buffer.from(tag(5, 3)))).toThrow(/wire type 3/);
  });
});
