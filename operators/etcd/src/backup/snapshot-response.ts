// The one protobuf message a snapshot stream carries, decoded by hand so the stream needs no gRPC
// library: etcdserverpb.SnapshotResponse { ResponseHeader header = 1; uint64 remaining_bytes = 2;
// bytes blob = 3; string version = 4 }. Unknown fields are skipped, as protobuf requires.

/** One message of a Maintenance.Snapshot stream. */
export interface SnapshotResponse {
  /** The next bytes of the snapshot; a view into the message, not a copy. */
  readonly blob: Buffer;
  /** Bytes the member still has to send after this message (0 on the last). */
  readonly remainingBytes: number;
  /** The member's storage version (etcd 3.6 and later), when this message says it. */
  readonly version: string | undefined;
}

const varintType = 0;
const fixed64Type = 1;
const lengthType = 2;
const fixed32Type = 5;

class Cursor {
  readonly data: Buffer;
  offset = 0;
  constructor(data: Buffer) {
    this.data = data;
  }

  varint(): number {
    let value = 0;
    let scale = 1;
    for (let i = 0; i < 10; i++) {
      const byte = this.data[this.offset++];
      if (byte === undefined) throw new Error('SnapshotResponse ends inside a varint');
      value += (byte & 0x7f) * scale;
      if (byte < 0x80) return value;
      scale *= 128;
    }
    throw new Error('SnapshotResponse holds a varint longer than 10 bytes');
  }

  bytes(length: number): Buffer {
    const end = this.offset + length;
    if (end > this.data.length)
      throw new Error(`SnapshotResponse field of ${length} bytes runs past its end`);
    const bytes = this.data.subarray(this.offset, end);
    this.offset = end;
    return bytes;
  }
}

/** Decodes a SnapshotResponse; throws on bytes that are not one. */
export function decodeSnapshotResponse(message: Buffer): SnapshotResponse {
  const cursor = new Cursor(message);
  let blob: Buffer = Buffer.alloc(0);
  let remainingBytes = 0;
  let version: string | undefined;
  while (cursor.offset < message.length) {
    const tag = cursor.varint();
    const field = Math.floor(tag / 8);
    const type = tag & 7;
    if (type === varintType) {
      const value = cursor.varint();
      if (field === 2) remainingBytes = value;
    } else if (type === lengthType) {
      const bytes = cursor.bytes(cursor.varint());
      if (field === 3) blob = bytes;
      else if (field === 4) version = bytes.toString('utf8');
    } else if (type === fixed64Type) cursor.bytes(8);
    else if (type === fixed32Type) cursor.bytes(4);
    else
      throw new Error(`SnapshotResponse field ${field} has wire type ${type}, which protobuf 3 never writes`);
  }
  return { blob, remainingBytes, version };
}
