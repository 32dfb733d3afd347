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

/** True for a 404 from the API server. */
export const isNotFound = (error: unknown): error is NotFoundError => error instanceof NotFoundError;
/** True for a 409 Conflict (not AlreadyExists). */
export const isConflict = (error: unknown): error is ConflictError => error instanceof ConflictError;
