import { describe, expect, it } from 'vitest';
import {
  BucketRateLimiter,
  MaxOfRateLimiter,
  ExponentialRateLimiter,
  defaultControllerRateLimiter,
} from './rate-limiter.ts';

describe('rate limiters', () => {
  it('lets a burst through the bucket, then spaces keys at the overall rate', () => {
    const bucket = new BucketRateLimiter(10, 3);
    const delays = [1, 2, 3, 4, 5].map(() => bucket.when());
    expect(delays.slice(0, 3)).toEqual([0, 0, 0]);
    expect(delays[3]).toBeGreaterThan(90);
    expect(delays[4]).toBeGreaterThan(190);
  });

  it('takes the longest delay of its limiters', () => {
    const limiter = new MaxOfRateLimiter(
      new ExponentialRateLimiter(5, 1000),
      new BucketRateLimiter(1000, 1000),
    );
    expect([1, 2, 3].map(() => limiter.when('k'))).toEqual([5, 10, 20]);
  });

  it('defaults to client-go: 5 ms doubling per key', () => {
    const limiter = defaultControllerRateLimiter();
    expect(limiter.when('k')).toBe(5);
    expect(limiter.when('k')).toBe(10);
  });
});
