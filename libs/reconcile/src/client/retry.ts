import { KubeApiError, NetworkError } from './errors.ts';
import { sleepUntilAborted } from '../helpers/sleep-until-aborted.ts';

export interface RetryPolicy {
  /** Attempts in all, the first included. Default 5. */
  attempts: number;
  /** First wait; doubles each time, with jitter. Default 200 ms. */
  initialDelayMs: number;
  /** Longest wait between attempts. Default 10 s. */
  maxDelayMs: number;
  /**
   * How a wait between attempts is spent: real time by default (sleepUntilAborted). Tests pass a
   * recorder, to see a server's Retry-After honoured without spending it.
   */
  wait?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

export const defaultRetryPolicy: RetryPolicy = { attempts: 5, initialDelayMs: 200, maxDelayMs: 10_000 };

/**
 * True for failures worth retrying: throttling (429), server errors (5xx) and requests that got no
 * answer. Never a programming error (a TypeError), a refusal (4xx) or an abort.
 */
export function isRetryable(error: unknown): boolean {
  if (error instanceof KubeApiError) return error.code === 429 || error.code >= 500;
  return error instanceof NetworkError;
}

/**
 * Whether a create may be sent again after `error`. A create with a fixed name cannot make a
 * duplicate (a second one is refused as AlreadyExists); one with generateName can, so it is only
 * retried when the API server certainly did not act on it: throttled, or never reached.
 */
export function isCreateRetryable(error: unknown, generatedName: boolean): boolean {
  if (!isRetryable(error)) return false;
  if (!generatedName) return true;
  if (error instanceof KubeApiError) return error.code === 429;
  return error instanceof NetworkError && !error.mayHaveReached;
}

/**
 * Runs `attempt` until it succeeds, retrying retryable failures with exponential backoff and
 * honouring the server's Retry-After. Non-retryable errors (404, 409, 422...) surface at once.
 */
export async function withRetries<T>(
  attempt: () => Promise<T>,
  policy: RetryPolicy = defaultRetryPolicy,
  signal?: AbortSignal,
  retryable: (error: unknown) => boolean = isRetryable,
): Promise<T> {
  for (let n = 1; ; n++) {
    try {
      return await attempt();
    } catch (error) {
      if (n >= policy.attempts || !retryable(error) || signal?.aborted) throw error;
      const backoff = Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** (n - 1));
      const retryAfterMs =
        error instanceof KubeApiError && error.retryAfterSeconds !== undefined
          ? error.retryAfterSeconds * 1000
          : 0;
      const delay = Math.max(retryAfterMs, backoff * (0.5 + Math.random() / 2));
      await (policy.wait ?? sleepUntilAborted)(delay, signal);
      if (signal?.aborted) throw error;
    }
  }
}
