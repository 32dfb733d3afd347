/** Decides how long a key waits before its next attempt. */
export interface RateLimiter {
  /** The delay before `key` may be processed again; counts one more failure for it. */
  when(key: string): number;
  /** Forgets `key`'s failures (after a success). */
  forget(key: string): void;
  /** How many times `key` has been retried since it was last forgotten. */
  retries(key: string): number;
}

/** Per-key exponential backoff: base × 2^failures, capped (client-go default: 5 ms to 1000 s). */
export class ExponentialRateLimiter implements RateLimiter {
  readonly #failures = new Map<string, number>();
  readonly baseMs: number;
  readonly maxMs: number;
  constructor(baseMs = 5, maxMs = 1_000_000) {
    this.baseMs = baseMs;
    this.maxMs = maxMs;
  }

  when(key: string): number {
    const failures = this.#failures.get(key) ?? 0;
    this.#failures.set(key, failures + 1);
    return Math.min(this.maxMs, this.baseMs * 2 ** failures);
  }

  forget(key: string): void {
    this.#failures.delete(key);
  }

  retries(key: string): number {
    return this.#failures.get(key) ?? 0;
  }
}

/** An overall token bucket across all keys (client-go default: 10 per second, burst 100). */
export class BucketRateLimiter implements RateLimiter {
  #tokens: number;
  #last = performance.now();
  readonly perSecond: number;
  readonly burst: number;
  constructor(perSecond = 10, burst = 100) {
    this.perSecond = perSecond;
    this.burst = burst;
    this.#tokens = burst;
  }

  when(): number {
    const now = performance.now();
    this.#tokens = Math.min(this.burst, this.#tokens + ((now - this.#last) / 1000) * this.perSecond);
    this.#last = now;
    this.#tokens -= 1; // reserve a token, possibly going into debt: the debt is the wait
    return this.#tokens >= 0 ? 0 : (-this.#tokens / this.perSecond) * 1000;
  }

  forget(): void {}

  retries(): number {
    return 0;
  }
}

/** The longest delay any of its limiters asks for (client-go's default controller limiter). */
export class MaxOfRateLimiter implements RateLimiter {
  readonly #limiters: RateLimiter[];
  constructor(...limiters: RateLimiter[]) {
    this.#limiters = limiters;
  }

  when(key: string): number {
    return Math.max(...this.#limiters.map((l) => l.when(key)));
  }

  forget(key: string): void {
    for (const l of this.#limiters) l.forget(key);
  }

  retries(key: string): number {
    return Math.max(...this.#limiters.map((l) => l.retries(key)));
  }
}

/** Per-key 5 ms…1000 s exponential backoff combined with an overall 10/s, burst 100 bucket. */
export function defaultControllerRateLimiter(): RateLimiter {
  return new MaxOfRateLimiter(new ExponentialRateLimiter(5, 1_000_000), new BucketRateLimiter(10, 100));
}
