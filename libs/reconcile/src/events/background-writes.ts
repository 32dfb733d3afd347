/**
 * Writes that nobody waits for, run a few at a time in the order they were added, with a bounded
 * backlog: what client-go's event broadcaster does with its queue of 1000 (a write added to a full
 * backlog is dropped, never waited for, so a slow API server cannot hold up whoever added it).
 */
export class BackgroundWrites {
  readonly #backlog: (() => Promise<void>)[] = [];
  readonly #maxBacklog: number;
  readonly #concurrency: number;
  #running = 0;
  #dropped = 0;
  #idle: (() => void)[] = [];

  constructor(options: { maxBacklog?: number; concurrency?: number } = {}) {
    this.#maxBacklog = options.maxBacklog ?? 1000;
    this.#concurrency = options.concurrency ?? 4;
  }

  /** Queues `write`; false (and nothing queued) when the backlog is full. `write` must not throw. */
  add(write: () => Promise<void>): boolean {
    if (this.#backlog.length >= this.#maxBacklog) {
      this.#dropped++;
      return false;
    }
    this.#backlog.push(write);
    this.#next();
    return true;
  }

  /** Writes queued or running now. */
  get pending(): number {
    return this.#backlog.length + this.#running;
  }

  /** Writes dropped so far because the backlog was full. */
  get dropped(): number {
    return this.#dropped;
  }

  /** Resolves true once nothing is queued or running, or false after `timeoutMs`. */
  async idle(timeoutMs = 30_000): Promise<boolean> {
    if (this.pending === 0) return true;
    let timer: NodeJS.Timeout | undefined;
    let done: (() => void) | undefined;
    const drained = await Promise.race([
      new Promise<true>((resolve) => {
        done = () => resolve(true);
        this.#idle.push(done);
      }),
      new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs))),
    ]);
    clearTimeout(timer);
    this.#idle = this.#idle.filter((waiter) => waiter !== done);
    return drained;
  }

  #next(): void {
    while (this.#running < this.#concurrency) {
      const write = this.#backlog.shift();
      if (!write) break;
      this.#running++;
      void write().finally(() => {
        this.#running--;
        this.#next();
        if (this.pending === 0) for (const resolve of this.#idle.splice(0)) resolve();
      });
    }
  }
}
