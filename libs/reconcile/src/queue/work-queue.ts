import { defaultControllerRateLimiter, type RateLimiter } from './rate-limiter.ts';

/** Hooks the queue calls so metrics can follow it without the queue knowing about Prometheus. */
export interface QueueObserver {
  add?(): void;
  depth?(depth: number): void;
  /** A key left the queue for a worker after waiting `seconds`. */
  got?(seconds: number): void;
  /** A worker finished a key after `seconds`. */
  done?(seconds: number): void;
  retry?(): void;
}

/**
 * The controller work queue. A key waiting in the queue is held once however often it is added;
 * a key being processed is never handed to a second worker: added again meanwhile, it is queued
 * once more when the first worker is done. Supports delayed and rate-limited adds, and a
 * shutdown that lets in-flight work finish.
 */
export class WorkQueue {
  readonly #queue: string[] = [];
  readonly #dirty = new Set<string>();
  readonly #processing = new Set<string>();
  readonly #waiters: ((key: string | undefined) => void)[] = [];
  readonly #delayed = new Map<string, { at: number; timer: NodeJS.Timeout }>();
  readonly #addedAt = new Map<string, number>();
  readonly #startedAt = new Map<string, number>();
  readonly #limiter: RateLimiter;
  readonly #observer: QueueObserver;
  #shuttingDown = false;
  #drained: (() => void) | undefined;

  constructor(options: { rateLimiter?: RateLimiter; observer?: QueueObserver } = {}) {
    this.#limiter = options.rateLimiter ?? defaultControllerRateLimiter();
    this.#observer = options.observer ?? {};
  }

  /** Queues `key` unless it is already waiting. Ignored after shutdown. */
  add(key: string): void {
    if (this.#shuttingDown) return;
    this.#observer.add?.();
    if (this.#dirty.has(key)) return;
    this.#dirty.add(key);
    this.#addedAt.set(key, performance.now());
    if (this.#processing.has(key)) return; // re-queued by done()
    this.#push(key);
  }

  /** Queues `key` after `delayMs`; of several pending delays for one key the earliest wins. */
  addAfter(key: string, delayMs: number): void {
    if (this.#shuttingDown) return;
    if (delayMs <= 0) return this.add(key);
    const at = performance.now() + delayMs;
    const pending = this.#delayed.get(key);
    if (pending && pending.at <= at) return;
    if (pending) clearTimeout(pending.timer);
    const timer = setTimeout(() => {
      this.#delayed.delete(key);
      this.add(key);
    }, delayMs);
    timer.unref();
    this.#delayed.set(key, { at, timer });
  }

  /** Queues `key` after the rate limiter's delay (its per-key backoff grows with each call). */
  addRateLimited(key: string): void {
    this.#observer.retry?.();
    this.addAfter(key, this.#limiter.when(key));
  }

  /** Resets `key`'s backoff (call after a successful reconcile). */
  forget(key: string): void {
    this.#limiter.forget(key);
  }

  /** Retries counted for `key` since it was last forgotten. */
  retries(key: string): number {
    return this.#limiter.retries(key);
  }

  /** The next key to process, or undefined once the queue is shut down. Call done(key) after. */
  async get(): Promise<string | undefined> {
    const key = this.#queue.shift();
    if (key !== undefined) return this.#take(key);
    if (this.#shuttingDown) return undefined;
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  /** Marks `key` finished; if it was added while processing, it is queued again. */
  done(key: string): void {
    this.#processing.delete(key);
    const started = this.#startedAt.get(key);
    this.#startedAt.delete(key);
    if (started !== undefined) this.#observer.done?.((performance.now() - started) / 1000);
    if (this.#dirty.has(key) && !this.#shuttingDown) this.#push(key);
    if (this.#shuttingDown && this.#processing.size === 0) this.#drained?.();
  }

  /** Keys waiting (not counting delayed or in-flight ones). */
  get length(): number {
    return this.#queue.length;
  }

  /** Keys being processed now. */
  get inFlight(): number {
    return this.#processing.size;
  }

  /** Seconds the longest-running key has been processed (0 if none). */
  longestRunningSeconds(): number {
    let oldest = Infinity;
    for (const at of this.#startedAt.values()) oldest = Math.min(oldest, at);
    return oldest === Infinity ? 0 : (performance.now() - oldest) / 1000;
  }

  /**
   * Stops handing out keys and waits for in-flight ones to be done, at most `timeoutMs`.
   * Resolves true if everything in flight finished in time.
   */
  async shutDownWithDrain(timeoutMs = 30_000): Promise<boolean> {
    this.#shuttingDown = true;
    for (const { timer } of this.#delayed.values()) clearTimeout(timer);
    this.#delayed.clear();
    for (const resolve of this.#waiters.splice(0)) resolve(undefined);
    if (this.#processing.size === 0) return true;
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), timeoutMs);
      this.#drained = () => {
        clearTimeout(timer);
        resolve(true);
      };
    });
  }

  #push(key: string): void {
    const waiter = this.#waiters.shift();
    if (waiter) waiter(this.#take(key));
    else {
      this.#queue.push(key);
      this.#observer.depth?.(this.#queue.length);
    }
  }

  #take(key: string): string {
    this.#dirty.delete(key);
    this.#processing.add(key);
    const added = this.#addedAt.get(key);
    this.#addedAt.delete(key);
    if (added !== undefined) this.#observer.got?.((performance.now() - added) / 1000);
    this.#startedAt.set(key, performance.now());
    this.#observer.depth?.(this.#queue.length);
    return key;
  }
}
