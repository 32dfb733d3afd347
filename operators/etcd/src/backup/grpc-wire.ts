// gRPC over HTTP/2 carries each message as a 5-byte prefix (a compressed flag, then the length as
// a big-endian uint32) and the message bytes, cut into DATA frames wherever HTTP/2 likes. Reading
// a snapshot's messages is SnapshotBlobReader's job; this holds the rest of the wire: the request
// body, and gRPC's status codes and messages.

export const grpcPrefixBytes = 5;

/** A gRPC request body with one message (`message` already encoded, uncompressed). */
export function grpcRequestBody(message: Uint8Array): Buffer {
  const body = Buffer.alloc(grpcPrefixBytes + message.length);
  body.writeUInt32BE(message.length, 1);
  body.set(message, grpcPrefixBytes);
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
