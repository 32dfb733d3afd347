// gRPC over HTTP/2 carries each message as a 5-byte prefix (a compressed flag, then the length as
// a big-endian uint32) and the message bytes, cut into DATA frames wherever HTTP/2 likes. This
// reassembles messages from the frames, copying only a message that spans frames.

const prefixBytes = 5;

/** Splits a gRPC response body into its messages; feed it DATA chunks in order. */
export class GrpcMessageReader {
  readonly #maxMessageBytes: number;
  #pending: Buffer[] = [];
  #pendingBytes = 0;

  /** `maxMessageBytes` refuses a length prefix no sane server sends (etcd sends 32 KiB blobs). */
  constructor(maxMessageBytes = 16 * 1024 * 1024) {
    this.#maxMessageBytes = maxMessageBytes;
  }

  /** Bytes held back waiting for the rest of a message; more than 0 at the end means a cut stream. */
  get pendingBytes(): number {
    return this.#pendingBytes;
  }

  /** Calls `onMessage` with every message `chunk` completes, in order. */
  push(chunk: Buffer, onMessage: (message: Buffer) => void): void {
    let data = chunk;
    if (this.#pendingBytes > 0) {
      this.#pending.push(chunk);
      this.#pendingBytes += chunk.length;
      const needed = this.#neededBytes();
      if (needed === undefined || this.#pendingBytes < needed) return;
      data = Buffer.concat(this.#pending, this.#pendingBytes);
      this.#pending = [];
      this.#pendingBytes = 0;
    }
    let offset = 0;
    while (data.length - offset >= prefixBytes) {
      const length = this.#messageLength(data, offset);
      const end = offset + prefixBytes + length;
      if (end > data.length) break;
      onMessage(data.subarray(offset + prefixBytes, end));
      offset = end;
    }
    if (offset < data.length) {
      const rest = data.subarray(offset);
      this.#pending = [rest];
      this.#pendingBytes = rest.length;
    }
  }

  /** Prefix plus message length of the first pending message, once its prefix has arrived. */
  #neededBytes(): number | undefined {
    if (this.#pendingBytes < prefixBytes) return undefined;
    const first = this.#pending[0];
    const head =
      first && first.length >= prefixBytes ? first : Buffer.concat(this.#pending, this.#pendingBytes);
    return prefixBytes + this.#messageLength(head, 0);
  }

  #messageLength(data: Buffer, offset: number): number {
    if (data[offset] !== 0) {
      throw new Error(
        `gRPC message compressed (flag ${String(data[offset])}), but no compression was asked for`,
      );
    }
    const length = data.readUInt32BE(offset + 1);
    if (length > this.#maxMessageBytes) {
      throw new Error(`gRPC message of ${length} bytes is over the ${this.#maxMessageBytes}-byte limit`);
    }
    return length;
  }
}

/** A gRPC request body with one message (`message` already encoded, uncompressed). */
export function grpcRequestBody(message: Uint8Array): Buffer {
  const body = Buffer.alloc(prefixBytes + message.length);
  body.writeUInt32BE(message.length, 1);
  body.set(message, prefixBytes);
  return body;
}

const statusNames = [
  'OK',
  'CANCELLED',
  'UNKNOWN',
  'INVALID_ARGUMENT',
  'DEADLINE_EXCEEDED',
  'NOT_FOUND',
  'ALREADY_EXISTS',
  'PERMISSION_DENIED',
  'RESOURCE_EXHAUSTED',
  'FAILED_PRECONDITION',
  'ABORTED',
  'OUT_OF_RANGE',
  'UNIMPLEMENTED',
  'INTERNAL',
  'UNAVAILABLE',
  'DATA_LOSS',
  'UNAUTHENTICATED',
];

/** `14 UNAVAILABLE`: a gRPC status code as people read it in logs. */
export function describeGrpcStatus(code: number): string {
  return `${code} ${statusNames[code] ?? 'UNKNOWN_CODE'}`;
}

/** grpc-message is percent-encoded (gRPC over HTTP/2); a malformed one is shown as sent. */
export function decodeGrpcMessage(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}
