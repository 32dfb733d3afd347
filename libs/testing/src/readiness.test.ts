import { describe, expect, it } from 'vitest';
import { consistently, waitUntil } from './readiness.ts';

describe('consistently', () => {
  it('passes when the check holds for the whole time, asking it more than once', async () => {
    let asked = 0;
    await consistently('always true', async () => (asked++, true), { forMs: 60, intervalMs: 10 });
    expect(asked).toBeGreaterThan(2);
  });

  it('fails at the first false answer, naming what and describing the state', async () => {
    let asked = 0;
    await expect(
      consistently('the count stays below 3', async () => ++asked < 3, {
        forMs: 5000,
        intervalMs: 5,
        describe: () => `asked ${asked} times`,
      }),
    ).rejects.toThrow(/^the count stays below 3: no longer true after \d+ ms\nasked 3 times$/);
  });

  it('counts an error from the check as a failure, with its message', async () => {
    await expect(
      consistently(
        'no error',
        async () => {
          throw new Error('connection refused');
        },
        { forMs: 1000 },
      ),
    ).rejects.toThrow(/no error: no longer true after \d+ ms \(error: Error: connection refused\)/);
  });
});

describe('waitUntil', () => {
  it('returns once the check is true, and fails naming what it waited for at the timeout', async () => {
    let asked = 0;
    await waitUntil('third time', async () => ++asked === 3, { timeoutMs: 5000, intervalMs: 5 });
    expect(asked).toBe(3);
    await expect(waitUntil('never', async () => false, { timeoutMs: 30, intervalMs: 5 })).rejects.toThrow(
      /^never: not ready after 30 ms/,
    );
  });
});
