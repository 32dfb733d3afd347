// Turns the body of a Maintenance.Snapshot response into the snapshot's bytes as the frames arrive,
// without reassembling messages. The body is gRPC messages (a 5-byte prefix: a compressed flag,
// then the length as a big-endian uint32), each an etcdserverpb.SnapshotResponse { ResponseHeader
// header = 1; uint64 remaining_bytes = 2; bytes blob = 3; string version = 4 }. etcd sends 32 KiB
// blobs in 16 KiB frames, so nearly every message spans frames: copying each whole message (an
// allocation per 32 KiB) and decoding it was most of the engine's own time per snapshot without a
// JIT. Here the blob's bytes are handed on as views of the frames they arrived in; only the few
// bytes around them (prefix, header, tags) are parsed, and copied only when a frame cuts them.
// Unknown fields are skipped, as protobuf requires.
import { grpcPrefixBytes } from './grpc-wire.ts';

const varintType = 0;
const fixed64Type = 1;
const lengthType = 2;
const fixed32Type = 5;
const blobField = 3;
const versionField = 4;

/** Reads a varint at `offset` of `data`; undefined when `data` ends first. */
function varintAt(data: Buffer, offset: number): { value: number; end: number } | undefined {
  let value = 0;
  let scale = 1;
  for (let i = 0; i < 10; i++) {
    const byte = data[offset + i];
    if (byte === undefined) return undefined;
    value += (byte & 0x7f) * scale;
    if (byte < 0x80) return { value, end: offset + i + 1 };
    scale *= 128;
  }
  throw new Error('SnapshotResponse holds a varint longer than 10 bytes');
}

/** Splits a Snapshot response body into blob bytes; feed it the DATA chunks in order. */
export class SnapshotBlobReader {
  readonly #maxMessageBytes: number;
  /** Bytes of the current message still to come (0 between messages). */
  #messageLeft = 0;
  /** Blob bytes of the current field still to come, passed through as they arrive. */
  #blobLeft = 0;
  /** A prefix, tag, length or small field cut by a frame: kept until the rest arrives. */
  #cut: Buffer | undefined;
  #version: string | undefined;

  /** `maxMessageBytes` refuses a length prefix no sane server sends (etcd sends 32 KiB blobs). */
  constructor(maxMessageBytes = 16 * 1024 * 1024) {
    this.#maxMessageBytes = maxMessageBytes;
  }

  /** The member's storage version, once a message said it (etcd 3.6 and later). */
  get version(): string | undefined {
    return this.#version;
  }

  /** True between messages: the body may end here. */
  get atMessageBoundary(): boolean {
    return this.#messageLeft === 0 && this.#cut === undefined;
  }

  /** Calls `onBlob` with the blob bytes `chunk` carries, in order; views of `chunk`, not copies. */
  push(chunk: Buffer, onBlob: (blob: Buffer) => void): void {
    let data = chunk;
    if (this.#cut) {
      data = Buffer.concat([this.#cut, chunk]);
      this.#cut = undefined;
    }
    let offset = 0;
    while (offset < data.length) {
      if (this.#blobLeft > 0) {
        const end = Math.min(data.length, offset + this.#blobLeft);
        // Most chunks lie wholly inside a blob: they go on as they are, without a view object.
        onBlob(offset === 0 && end === data.length ? data : data.subarray(offset, end));
        this.#blobLeft -= end - offset;
        this.#messageLeft -= end - offset;
        offset = end;
        continue;
      }
      const next = this.#messageLeft === 0 ? this.#prefix(data, offset) : this.#field(data, offset);
      if (next === undefined) {
        // Cut inside a prefix or field head: at most a few bytes, kept for the next chunk.
        this.#cut = Buffer.from(data.subarray(offset));
        return;
      }
      offset = next;
    }
  }

  /** Reads a message prefix at `offset`; returns where the message starts, or undefined if cut. */
  #prefix(data: Buffer, offset: number): number | undefined {
    if (data.length - offset < grpcPrefixBytes) return undefined;
    if (data[offset] !== 0) {
      throw new Error(
        `gRPC message compressed (flag ${String(data[offset])}), but no compression was asked for`,
      );
    }
    const length = data.readUInt32BE(offset + 1);
    if (length > this.#maxMessageBytes) {
      throw new Error(`gRPC message of ${length} bytes is over the ${this.#maxMessageBytes}-byte limit`);
    }
    this.#messageLeft = length;
    return offset + grpcPrefixBytes;
  }

  /**
   * Reads one field at `offset`: a blob starts passing through, anything else is read or skipped
   * whole. Returns where the next thing starts, or undefined when the chunk cuts the field's head
   * (or a small field) short.
   */
  #field(data: Buffer, offset: number): number | undefined {
    const messageEnd = offset + this.#messageLeft;
    const within = (end: number, what: string) => {
      if (end > messageEnd) throw new Error(`SnapshotResponse ${what} runs past the message's end`);
      return end;
    };
    const tag = varintAt(data, offset);
    if (!tag) return this.#cutOrEnd(data, messageEnd);
    within(tag.end, 'tag');
    const field = Math.floor(tag.value / 8);
    const type = tag.value & 7;
    let end: number;
    if (type === varintType) {
      const value = varintAt(data, tag.end);
      if (!value) return this.#cutOrEnd(data, messageEnd);
      end = within(value.end, 'varint');
    } else if (type === fixed64Type || type === fixed32Type) {
      end = within(tag.end + (type === fixed64Type ? 8 : 4), `field ${field}`);
      if (end > data.length) return undefined;
    } else if (type === lengthType) {
      const length = varintAt(data, tag.end);
      if (!length) return this.#cutOrEnd(data, messageEnd);
      const fieldEnd = within(length.end + length.value, `field ${field} of ${length.value} bytes`);
      if (field === blobField) {
        this.#messageLeft -= length.end - offset;
        this.#blobLeft = length.value;
        return length.end;
      }
      if (fieldEnd > data.length) return undefined;
      if (field === versionField) this.#version = data.toString('utf8', length.end, fieldEnd);
      end = fieldEnd;
    } else {
      throw new Error(`SnapshotResponse field ${field} has wire type ${type}, which protobuf 3 never writes`);
    }
    this.#messageLeft -= end - offset;
    return end;
  }

  /** A head cut by the chunk's end waits for more; one cut by the message's end is malformed. */
  #cutOrEnd(data: Buffer, messageEnd: number): undefined {
    if (messageEnd <= data.length) throw new Error('SnapshotResponse ends inside a varint');
    return undefined;
  }
}
