// Reads etcd's Maintenance.Snapshot stream over node:http2 directly, without grpc-js. grpc-js does
// its receive work (framing, protobuf decoding, a stream per message) on the main thread and kept
// a snapshot at 0.45-0.62x etcdctl's speed even with a 4 MiB window; this reader hands each
// DATA frame's blob bytes to the caller as views (SnapshotBlobReader), from 'data' events (ADR
// 0304). Only the snapshot stream goes this way: every other call stays on etcd3.
import {
  connect,
  constants,
  type ClientHttp2Session,
  type ClientHttp2Stream,
  type IncomingHttpHeaders,
  type SecureClientSessionOptions,
} from 'node:http2';
import { isIP } from 'node:net';
import type { EtcdConnection } from '../connection.ts';
import { decodeGrpcMessage, describeGrpcStatus, grpcRequestBody } from './grpc-wire.ts';
import { SnapshotBlobReader } from './snapshot-blob-reader.ts';

/** Where to read a snapshot from and how. */
export interface SnapshotStreamRequest {
  /** The member's client URL, http:// or https://. */
  readonly clientUrl: string;
  /** Client TLS, as the rest of the engine takes it (CA, client certificate and key). */
  readonly credentials?: EtcdConnection['credentials'];
  /** An etcd auth token (from Auth.Authenticate), sent as the `token` metadata etcd expects. */
  readonly token?: string;
  /** Cancels the stream and the connection; the returned promise rejects with the signal's reason. */
  readonly signal?: AbortSignal;
  /** How long connecting and the response headers may take, in ms (default 5000). */
  readonly connectTimeoutMs?: number;
}

/** What a finished stream said about itself. */
export interface SnapshotStreamEnd {
  /** Bytes of blob received, the sha256 trailer included. */
  readonly bytes: number;
  /** The member's storage version, if it sent one (etcd 3.6 and later). */
  readonly version: string | undefined;
}

/** A stream that failed: which member, how far it got, and what gRPC or HTTP/2 said. */
export class SnapshotStreamError extends Error {
  override readonly name = 'SnapshotStreamError';
  /** The gRPC status code when the member sent one. */
  readonly grpcStatus: number | undefined;

  constructor(message: string, details: { grpcStatus?: number; cause?: unknown } = {}) {
    super(message, { cause: details.cause });
    this.grpcStatus = details.grpcStatus;
  }
}

// grpc-go (etcd) sends 32 KiB blobs in 16 KiB DATA frames. With HTTP/2's 64 KiB default window it
// waits for a WINDOW_UPDATE every two blobs; 4 MiB, per stream and for the connection, let the
// stream run at the loopback's speed in bench:snapshot. It is also the most a stalled sink makes
// the member buffer for us.
const windowBytes = 4 * 1024 * 1024;
const snapshotPath = '/etcdserverpb.Maintenance/Snapshot';
// An empty SnapshotRequest: no fields.
const requestBody = grpcRequestBody(new Uint8Array(0));

function tlsOptions(url: URL, credentials: SnapshotStreamRequest['credentials']): SecureClientSessionOptions {
  // SNI carries host names only (RFC 6066); the certificate is still checked against the IP.
  const sni = isIP(url.hostname.replace(/^\[|\]$/g, '')) ? { servername: '' } : {};
  if (!credentials) return sni;
  return {
    ...sni,
    ca: credentials.rootCertificate,
    ...(credentials.certChain ? { cert: credentials.certChain } : {}),
    ...(credentials.privateKey ? { key: credentials.privateKey } : {}),
  };
}

function grpcStatusOf(headers: IncomingHttpHeaders): number | undefined {
  const raw = headers['grpc-status'];
  return raw === undefined ? undefined : Number(raw);
}

function grpcMessageOf(headers: IncomingHttpHeaders): string {
  const raw = headers['grpc-message'];
  return typeof raw === 'string' && raw ? `: ${decodeGrpcMessage(raw)}` : '';
}

/**
 * Hands the stream's blob bytes to `onBlob` from 'data' events, and resolves at the stream's end.
 * Without a JIT, async iteration cost a promise round per 16 KiB frame; here a chunk costs one
 * call, and the stream pauses only when `onBlob` returns a promise (a sink that is behind), until
 * it settles, delivering the blobs held back meanwhile in order.
 */
function deliverBlobs(
  stream: ClientHttp2Stream,
  reader: SnapshotBlobReader,
  onBlob: (blob: Buffer) => void | Promise<void>,
): Promise<void> {
  return new Promise((resolve, reject) => {
    let ended = false;
    let failed = false;
    // Blobs that arrived while the stream waited for a promise of onBlob, in order.
    let held: Buffer[] | undefined;
    const fail = (error: unknown) => {
      if (failed) return;
      failed = true;
      stream.destroy();
      reject(error);
    };
    const catchUp = async (waitFor: Promise<void>) => {
      stream.pause();
      try {
        await waitFor;
        while (held && held.length > 0) {
          const blob = held.shift();
          if (blob) await onBlob(blob);
        }
      } catch (error) {
        fail(error);
        return;
      }
      held = undefined;
      if (ended) resolve();
      else stream.resume();
    };
    const take = (blob: Buffer) => {
      if (held) {
        held.push(blob);
        return;
      }
      const waitFor = onBlob(blob);
      if (waitFor) {
        held = [];
        void catchUp(waitFor);
      }
    };
    stream.on('data', (chunk: Buffer) => {
      if (failed) return;
      try {
        reader.push(chunk, take);
      } catch (error) {
        fail(error);
      }
    });
    stream.once('end', () => {
      ended = true;
      if (!held && !failed) resolve();
    });
    stream.once('error', fail);
    stream.once('close', () => {
      if (!ended) fail(new Error('the stream closed before its end'));
    });
  });
}

/**
 * Streams a member's snapshot into `onBlob`, in order, and resolves once the member ended the
 * stream with grpc-status 0. `onBlob` may return a promise: the stream waits for it (a slow sink
 * slows the member instead of filling memory). Blobs are views into received frames: keep them
 * only as long as `onBlob` runs, or copy. Checking the sha256 trailer is the caller's job.
 */
export async function readSnapshotStream(
  request: SnapshotStreamRequest,
  onBlob: (blob: Buffer) => void | Promise<void>,
): Promise<SnapshotStreamEnd> {
  const { clientUrl, signal } = request;
  signal?.throwIfAborted();
  const url = new URL(clientUrl);
  const what = `snapshot stream from ${url.origin}`;
  let bytes = 0;
  const fail = (message: string, details: { grpcStatus?: number; cause?: unknown } = {}) =>
    new SnapshotStreamError(`${what}: ${message} (after ${bytes} bytes)`, details);

  const session: ClientHttp2Session = connect(url.origin, {
    settings: { initialWindowSize: windowBytes },
    ...(url.protocol === 'https:' ? tlsOptions(url, request.credentials) : {}),
  });
  let stream: ClientHttp2Stream | undefined;
  // Any failure of the session or the stream ends the iteration below with this error.
  let sessionError: Error | undefined;
  const onAbort = () => {
    stream?.close(constants.NGHTTP2_CANCEL);
    session.destroy();
  };
  signal?.addEventListener('abort', onAbort, { once: true });
  const connectTimer = setTimeout(() => {
    sessionError ??= fail(`no response within ${request.connectTimeoutMs ?? 5000} ms`);
    session.destroy(sessionError);
  }, request.connectTimeoutMs ?? 5000);
  try {
    session.on('error', (error: Error) => {
      sessionError ??= fail(`connection failed: ${error.message}`, { cause: error });
    });
    session.once('connect', () => session.setLocalWindowSize(windowBytes));
    stream = session.request({
      ':method': 'POST',
      ':path': snapshotPath,
      'content-type': 'application/grpc',
      te: 'trailers',
      ...(request.token ? { token: request.token } : {}),
    });
    stream.end(requestBody);

    let trailers: IncomingHttpHeaders | undefined;
    const ended = new Promise<IncomingHttpHeaders>((resolve, reject) => {
      stream?.once('response', (headers) => {
        clearTimeout(connectTimer);
        // A call refused at once (e.g. no permission) is "trailers-only": the status comes in the headers.
        if (grpcStatusOf(headers) !== undefined) trailers = headers;
        else if (headers[':status'] !== 200)
          reject(fail(`HTTP status ${String(headers[':status'])}, not a gRPC answer`));
      });
      stream?.once('trailers', (headers) => (trailers = headers));
      stream?.once('close', () => resolve(trailers ?? {}));
    });
    ended.catch(() => undefined);

    const reader = new SnapshotBlobReader();
    try {
      await deliverBlobs(stream, reader, (blob) => {
        bytes += blob.length;
        return onBlob(blob);
      });
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      if (sessionError) throw sessionError;
      if (error instanceof SnapshotStreamError) throw error;
      throw fail(`stream failed: ${error instanceof Error ? error.message : String(error)}`, {
        cause: error,
      });
    }
    if (signal?.aborted) throw signal.reason;
    const end = await ended;
    if (sessionError) throw sessionError;
    const status = grpcStatusOf(end);
    if (status === undefined) throw fail('the stream ended without a gRPC status');
    if (status !== 0)
      throw fail(`etcd answered ${describeGrpcStatus(status)}${grpcMessageOf(end)}`, { grpcStatus: status });
    if (!reader.atMessageBoundary) throw fail('the stream ended inside a message');
    return { bytes, version: reader.version };
  } finally {
    clearTimeout(connectTimer);
    signal?.removeEventListener('abort', onAbort);
    // Done or failed, nothing more is wanted from this member: a graceful close would let an
    // unfinished stream run on.
    session.destroy();
  }
}
