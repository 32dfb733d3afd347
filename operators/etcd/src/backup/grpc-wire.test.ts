import { describe, expect, it } from 'vitest';
import { decodeGrpcMessage, describeGrpcStatus, grpcRequestBody } from './grpc-wire.ts';

describe('gRPC wire helpers', () => {
  it('frames a request body with its 5-byte prefix', () => {
    expect([...grpcRequestBody(Buffer.from('abc'))]).toEqual([0, 0, 0, 0, 3, 97, 98, 99]);
  });

  it('names status codes and decodes percent-encoded messages', () => {
    expect(describeGrpcStatus(7)).toBe('7 PERMISSION_DENIED');
    expect(describeGrpcStatus(99)).toBe('99 UNKNOWN_CODE');
    expect(decodeGrpcMessage('etcdserver:%20permission%20denied')).toBe('etcdserver: permission denied');
    expect(decodeGrpcMessage('100%')).toBe('100%');
  });
});
