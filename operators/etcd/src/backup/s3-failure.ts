// What an S3 failure may say in status, Events and logs. The endpoint is the user's to set and the
// operator dials it from its own network position, so whatever answers there (an S3 server, or any
// service the operator can reach) chooses the error text: reflecting it would let a user read, through
// an EtcdBackup's status, what an internal service answers the operator. So a failure is told by
// what the client itself knows: the S3 error code (a short identifier), the HTTP status, or the
// network error code; never the server's message or body.

/** An S3 call that failed, with a message fit for status. */
export class S3CallError extends Error {
  override readonly name = 'S3CallError';
  /** The S3 error code, the network error code, or `Unrecognized`. */
  readonly code: string;
  readonly httpStatus: number | undefined;
  constructor(operation: string, location: string, code: string, httpStatus: number | undefined) {
    super(
      `S3 ${operation} ${location} failed: ${code}${httpStatus === undefined ? '' : ` (HTTP ${httpStatus})`}`,
    );
    this.code = code;
    this.httpStatus = httpStatus;
  }
}

// An S3 error code is a short CamelCase identifier (NoSuchBucket, AccessDenied, SlowDown); anything
// else in its place came from something that is not an S3 server, and is not repeated.
const s3Code = /^[A-Za-z][A-Za-z0-9.]{0,63}$/;
const genericNames = new Set(['Error', 'Unknown', 'UnknownError', 'S3ServiceException', 'AggregateError']);
// Node's network and TLS error codes (ECONNREFUSED, ENOTFOUND, ETIMEDOUT, CERT_HAS_EXPIRED, ...).
const networkCode = /^[A-Z][A-Z0-9_]{1,63}$/;

/** `error` (whatever the SDK or the network threw) as an S3CallError that repeats no server text. */
export function s3CallError(operation: string, location: string, error: unknown): S3CallError {
  if (error instanceof S3CallError) return error;
  const fields = typeof error === 'object' && error !== null ? (error as Record<string, unknown>) : {};
  const metadata = fields['$metadata'];
  const httpStatus =
    typeof metadata === 'object' && metadata !== null
      ? numberOrUndefined((metadata as Record<string, unknown>)['httpStatusCode'])
      : undefined;
  const nodeCode = fields['code'];
  if (typeof nodeCode === 'string' && networkCode.test(nodeCode)) {
    return new S3CallError(operation, location, nodeCode, httpStatus);
  }
  const name = fields['name'];
  // The SDK names a service error after its S3 code, and its own failures (TimeoutError) by kind.
  const code =
    typeof name === 'string' && s3Code.test(name) && !genericNames.has(name) ? name : 'Unrecognized';
  return new S3CallError(operation, location, code, httpStatus);
}

function numberOrUndefined(value: unknown): number | undefined {
  return typeof value === 'number' ? value : undefined;
}
