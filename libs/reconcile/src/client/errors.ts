/** The `Status` object the API server returns with an error. */
export interface ApiStatus {
  kind?: string;
  status?: string;
  message?: string;
  reason?: string;
  code?: number;
  details?: {
    name?: string;
    kind?: string;
    causes?: { field?: string; message?: string; reason?: string }[];
  };
}

/** A request the API server answered with an error status; carries the method, path and Status. */
export class KubeApiError extends Error {
  readonly code: number;
  readonly reason: string;
  readonly method: string;
  readonly path: string;
  readonly status: ApiStatus;
  readonly retryAfterSeconds: number | undefined;

  constructor(method: string, path: string, code: number, status: ApiStatus, retryAfterSeconds?: number) {
    super(`${method} ${path}: ${code} ${status.reason ?? ''}: ${status.message ?? 'no message'}`);
    this.name = new.target.name;
    this.code = code;
    this.reason = status.reason ?? '';
    this.method = method;
    this.path = path;
    this.status = status;
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** 404: the object (or its kind) does not exist. */
export class NotFoundError extends KubeApiError {}
/** 409 Conflict: a write lost an optimistic-concurrency race or a field-ownership conflict. */
export class ConflictError extends KubeApiError {}
/** 409 AlreadyExists: a create for a name that is taken. */
export class AlreadyExistsError extends KubeApiError {}
/** 410 Gone: a resourceVersion too old to list or watch from; relist. */
export class GoneError extends KubeApiError {}
/** 422 Invalid: the object broke the schema or a validation rule. */
export class InvalidError extends KubeApiError {}

/** Builds the most specific error class for an API server error response. */
export function apiError(
  method: string,
  path: string,
  code: number,
  status: ApiStatus,
  retryAfterSeconds?: number,
): KubeApiError {
  const args = [method, path, code, status, retryAfterSeconds] as const;
  if (code === 404) return new NotFoundError(...args);
  if (code === 409)
    return status.reason === 'AlreadyExists' ? new AlreadyExistsError(...args) : new ConflictError(...args);
  if (code === 410) return new GoneError(...args);
  if (code === 422) return new InvalidError(...args);
  return new KubeApiError(...args);
}

/**
 * The request got no answer: the connection was refused, reset or timed out. `mayHaveReached`
 * says whether the API server may have received it (false only when no connection was made), which
 * decides whether a non-idempotent request may be sent again.
 */
export class NetworkError extends Error {
  readonly code: string | undefined;
  readonly mayHaveReached: boolean;

  constructor(message: string, options: { cause: unknown; code?: string; mayHaveReached: boolean }) {
    super(message, { cause: options.cause });
    this.name = 'NetworkError';
    this.code = options.code;
    this.mayHaveReached = options.mayHaveReached;
  }
}

/**
 * A reconcile failure that retrying cannot fix (the user's input is wrong, a name is taken by
 * someone else's object). The controller records it as a Warning Event on the object and does not
 * retry; the next change to the object (or to what it owns) reconciles it again. `reason` is the
 * Event's reason, in CamelCase.
 */
export class PermanentError extends Error {
  readonly reason: string;

  constructor(reason: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'PermanentError';
    this.reason = reason;
  }
}

/** True for a 404 from the API server. */
export const isNotFound = (error: unknown): error is NotFoundError => error instanceof NotFoundError;
/** True for a 409 Conflict (not AlreadyExists). */
export const isConflict = (error: unknown): error is ConflictError => error instanceof ConflictError;
