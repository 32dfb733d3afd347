import { describe, expect, it } from 'vitest';
import {
  GrpcMessageReader,
  decodeGrpcMessage,
  describeGrpcStatus,
  grpcRequestBody,
} from './grpc-message-reader.ts';

const framed = (...messages: Buffer[]) => Buffer.concat(messages.map((m) => grpcRequestBody(m)));

/** Feeds `body` cut at `cuts` and returns the messages the reader gave back. */
function readCut(body: Buffer, cuts: number[]): { messages: string[]; pending: number } {
  const reader = new GrpcMessageReader();
  const messages: string[] = [];
  let from = 0;
  for (const at of [...cuts, body.length]) {
    reader.push(body.subarray(from, at), (m) => messages.push(m.toString()));
    from = at;
  }
  return { messages, pending: reader.pendingBytes };
}

describe('gRPC message framing', () => {
  const body = framed(Buffer.from('first message'), Buffer.alloc(0), Buffer.from('x'.repeat(40_000)));
  const expected = ['first message', '', 'x'.repeat(40_000)];

  it('gives back every message whole, wherever the frames cut the body', () => {
    expect(readCut(body, [])).toEqual({ messages: expected, pending: 0 });
    // Inside a prefix, right after it, inside a message, between messages, one byte at a time at the start.
    expect(readCut(body, [2, 5, 9, 18, 19, 20, 23, 100, 16_384, 32_768])).toEqual({
      messages: expected,
      pending: 0,
    });
    expect(
      readCut(
        body,
        Array.from({ length: 30 }, (_, i) => i + 1),
      ),
    ).toEqual({
      messages: expected,
      pending: 0,
    });
  });

  it('holds back a cut message and says how much is pending', () => {
    const { messages, pending } = readCut(body.subarray(0, body.length - 10), [7]);
    expect(messages).toEqual(['first message', '']);
    expect(pending).toBe(5 + 40_000 - 10);
  });

  it('refuses compressed messages and lengths over the limit, saying which', () => {
    const compressed = grpcRequestBody(Buffer.from('z'));
    compressed[0] = 1;
    expect(() => new GrpcMessageReader().push(compressed, () => undefined)).toThrow(/compressed \(flag 1\)/);
    expect(() => new GrpcMessageReader(10).push(framed(Buffer.alloc(11)), () => undefined)).toThrow(
      /11 bytes is over the 10-byte limit/,
    );
  });

  it('names status codes and decodes percent-encoded messages', () => {
    expect(describeGrpcStatus(7)).toBe('7 PERMISSION_DENIED');
    expect(describeGrpcStatus(99)).toBe('99 UNKNOWN_CODE');
    expect(decodeGrpcMessage('etcdserver:%20permission%20denied')).toBe('etcdserver: permission denied');
    expect(decodeGrpcMessage('100%')).toBe('100%');
  });
});
