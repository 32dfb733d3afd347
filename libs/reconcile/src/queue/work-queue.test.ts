import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { WorkQueue } from './work-queue.ts';
import { ExponentialRateLimiter } from './rate-limiter.ts';

const noLimit = { rateLimiter: new ExponentialRateLimiter(1, 1000) };

// Virtual time: delays and deadlines are advanced by the test, never waited for.
const advance = (ms: number) => vi.advanceTimersByTimeAsync(ms);

describe('WorkQueue', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('holds a waiting key once however often it is added', async () => {
    const queue = new WorkQueue(noLimit);
    queue.add('ns/a');
    queue.add('ns/b');
    queue.add('ns/a');
    queue.add('ns/a');
    expect(queue.length).toBe(2);
    expect(await queue.get()).toBe('ns/a');
    expect(await queue.get()).toBe('ns/b');
  });

  it('never hands a key being processed to a second worker, and requeues it once when done', async () => {
    const queue = new WorkQueue(noLimit);
    queue.add('ns/a');
    const first = await queue.get();
    expect(first).toBe('ns/a');

    queue.add('ns/a'); // a change arrives while a worker holds the key
    queue.add('ns/a');
    expect(queue.length).toBe(0);
    let secondWorkerGot: string | undefined = 'nothing yet';
    const second = queue.get().then((k) => (secondWorkerGot = k));
    await advance(20);
    expect(secondWorkerGot).toBe('nothing yet');

    queue.done('ns/a');
    await second;
    expect(secondWorkerGot).toBe('ns/a');
    queue.done('ns/a');
    expect(queue.length).toBe(0);
  });

  it('grows the per-key backoff exponentially and resets it on forget', async () => {
    const limiter = new ExponentialRateLimiter(5, 1_000_000);
    expect([1, 2, 3, 4, 5].map(() => limiter.when('k'))).toEqual([5, 10, 20, 40, 80]);
    expect(limiter.retries('k')).toBe(5);
    expect(limiter.when('other')).toBe(5);
    limiter.forget('k');
    expect(limiter.when('k')).toBe(5);
    const capped = new ExponentialRateLimiter(5, 1_000_000);
    for (let i = 0; i < 40; i++) capped.when('k');
    expect(capped.when('k')).toBe(1_000_000);
  });

  it('delays rate-limited adds by the limiter and keeps the earliest of several delays', async () => {
    const queue = new WorkQueue({ rateLimiter: new ExponentialRateLimiter(40, 10_000) });
    queue.addRateLimited('ns/a'); // 40 ms
    expect(queue.length).toBe(0);
    queue.addAfter('ns/b', 5_000);
    queue.addAfter('ns/b', 10); // earlier wins
    await advance(39);
    expect(queue.length).toBe(1); // ns/b after 10 ms, ns/a not before its 40
    await advance(1);
    expect(queue.length).toBe(2);
    expect(queue.retries('ns/a')).toBe(1);
  });

  it('drains on shutdown: in-flight work finishes, waiting workers are released, new adds are ignored', async () => {
    const queue = new WorkQueue(noLimit);
    queue.add('ns/a');
    const key = await queue.get();
    const idleWorker = queue.get();
    let drained = false;
    const shutdown = queue.shutDownWithDrain(5_000).then((ok) => (drained = ok));
    expect(await idleWorker).toBeUndefined();
    queue.add('ns/late');
    await advance(20);
    expect(drained).toBe(false);
    queue.done(key ?? '');
    await shutdown;
    expect(drained).toBe(true);
    expect(await queue.get()).toBeUndefined();
  });

  it('reports a drain that missed its deadline', async () => {
    const queue = new WorkQueue(noLimit);
    queue.add('ns/stuck');
    await queue.get();
    const drained = queue.shutDownWithDrain(30);
    await advance(30);
    expect(await drained).toBe(false);
  });
});
