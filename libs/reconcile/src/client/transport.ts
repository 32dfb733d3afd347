import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { clusterAccess, type ClusterAccess, type ClusterSource, type Credentials } from './cluster-access.ts';
import { NetworkError, apiError, type ApiStatus, type KubeApiError } from './errors.ts';

export interface HttpRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  contentType?: string;
  /** Aborts the request (and, for streams, the response). */
  signal?: AbortSignal;
  /** Socket inactivity limit before a response starts. Default 30 s. */
  timeoutMs?: number;
}

/** Counts of the requests this transport has sent, by verb, for tests and metrics. */
export interface RequestCounts {
  [verb: string]: number;
}

type RequestObserver = (method: string, path: string, code: number, seconds: number) => void;

// Auth material (tokens from exec plugins, rotated service-account tokens) may change;
// re-read it this often rather than on every request.
const authRefreshMs = 60_000;

/**
 * HTTP to the API server on one keep-alive agent: the same sockets for every request and watch
 * (a fresh agent per request leaked file descriptors in @kubernetes/client-node, issue #2893).
 */
export class KubeTransport {
  readonly server: URL;
  readonly counts: RequestCounts = {};
  readonly #access: ClusterAccess;
  readonly #agent: HttpsAgent | HttpAgent;
  #auth: { credentials: Credentials; at: number } | undefined;
  #observers: RequestObserver[] = [];
  #userAgent: string;

  constructor(source: ClusterSource, userAgent = 'homeostat') {
    this.#access = clusterAccess(source);
    this.server = new URL(this.#access.server);
    this.#userAgent = userAgent;
    this.#agent =
      this.server.protocol === 'https:'
        ? new HttpsAgent({ keepAlive: true, maxSockets: 64 })
        : new HttpAgent({ keepAlive: true, maxSockets: 64 });
  }

  /** Calls `observer` after every completed request (for metrics). */
  onRequest(observer: RequestObserver): void {
    this.#observers.push(observer);
  }

  async #credentials(): Promise<Credentials> {
    if (this.#auth && Date.now() - this.#auth.at < authRefreshMs) return this.#auth.credentials;
    const credentials = await this.#access.credentials();
    this.#auth = { credentials, at: Date.now() };
    return credentials;
  }

  /** Sends a request and parses a JSON response; throws a typed KubeApiError on an error status. */
  async json<T>(req: HttpRequest): Promise<T> {
    const res = await this.#send(req);
    const text = await readBody(res);
    if ((res.statusCode ?? 0) >= 400) throw errorFrom(req, res, text);
    return (text ? JSON.parse(text) : {}) as T;
  }

  /** Sends a request and returns the response stream (for watches); throws on an error status. */
  async stream(req: HttpRequest): Promise<IncomingMessage> {
    const res = await this.#send(req);
    if ((res.statusCode ?? 0) >= 400) throw errorFrom(req, res, await readBody(res));
    return res;
  }

  /** Closes idle keep-alive sockets. */
  close(): void {
    this.#agent.destroy();
  }

  async #send(req: HttpRequest): Promise<IncomingMessage> {
    const auth = await this.#credentials();
    const url = new URL(req.path, this.server);
    for (const [key, value] of Object.entries(req.query ?? {})) {
      if (value !== undefined) url.searchParams.set(key, String(value));
    }
    const body = req.body === undefined ? undefined : JSON.stringify(req.body);
    const headers: Record<string, string> = {
      ...auth.headers,
      accept: 'application/json',
      'user-agent': this.#userAgent,
    };
    if (body !== undefined) {
      headers['content-type'] = req.contentType ?? 'application/json';
      headers['content-length'] = String(Buffer.byteLength(body));
    }
    const verb = req.query?.['watch'] ? 'WATCH' : req.method;
    this.counts[verb] = (this.counts[verb] ?? 0) + 1;
    const started = performance.now();
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise<IncomingMessage>((resolve, reject) => {
      const request = send(
        url,
        {
          method: req.method,
          headers,
          agent: this.#agent,
          ca: auth.ca,
          cert: auth.cert,
          key: auth.key,
          ...(auth.rejectUnauthorized === undefined ? {} : { rejectUnauthorized: auth.rejectUnauthorized }),
          ...(auth.servername ? { servername: auth.servername } : {}),
          timeout: req.timeoutMs ?? 30_000,
          ...(req.signal ? { signal: req.signal } : {}),
        },
        (res) => {
          // From here the caller owns idleness; a watch sets its own timer.
          request.setTimeout(0);
          const seconds = (performance.now() - started) / 1000;
          for (const observe of this.#observers) observe(verb, req.path, res.statusCode ?? 0, seconds);
          resolve(res);
        },
      );
      request.on('timeout', () => {
        const error = new Error(`no response within ${req.timeoutMs ?? 30_000} ms`);
        request.destroy(Object.assign(error, { code: 'ETIMEDOUT' }));
      });
      request.on('error', (error: NodeJS.ErrnoException) => {
        // An abort is the caller's decision, not a failure of the network: never retried.
        if (error.name === 'AbortError' || req.signal?.aborted) {
          reject(abortError(req, url, error));
          return;
        }
        reject(
          new NetworkError(`${req.method} ${url.pathname}: ${error.message}`, {
            cause: error,
            ...(error.code ? { code: error.code } : {}),
            mayHaveReached: !neverSentCodes.has(error.code ?? ''),
          }),
        );
      });
      request.end(body);
    });
  }
}

// Failures that happen before a connection exists: the API server cannot have seen the request.
const neverSentCodes = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ENETUNREACH', 'EHOSTUNREACH']);

function abortError(req: HttpRequest, url: URL, cause: unknown): Error {
  const error = new Error(`${req.method} ${url.pathname}: aborted`, { cause });
  error.name = 'AbortError';
  return error;
}

async function readBody(res: IncomingMessage): Promise<string> {
  let text = '';
  res.setEncoding('utf8');
  for await (const chunk of res) text += chunk as string;
  return text;
}

function errorFrom(req: HttpRequest, res: IncomingMessage, text: string): KubeApiError {
  let status: ApiStatus;
  try {
    status = JSON.parse(text) as ApiStatus;
  } catch {
    status = { message: text.slice(0, 500) || res.statusMessage || 'no body' };
  }
  const retryAfter = Number(res.headers['retry-after']);
  return apiError(
    req.method,
    req.path,
    res.statusCode ?? 0,
    status,
    Number.isFinite(retryAfter) ? retryAfter : undefined,
  );
}
