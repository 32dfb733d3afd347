import { describe, expect, it } from 'vitest';
import { sleepUntilAborted } from './sleep-until-aborted.ts';

describe('sleepUntilAborted', () => {
  it('waits the time, ends early without rejecting when the signal aborts, and at once when it already has', async () => {
    const started = performance.now();
    await sleepUntilAborted(20);
    expect(performance.now() - started).toBeGreaterThanOrEqual(15);

    const abort = new AbortController();
    const waiting = sleepUntilAborted(60_000, abort.signal);
    abort.abort();
    await expect(waiting).resolves.toBeUndefined();
    await expect(sleepUntilAborted(60_000, abort.signal)).resolves.toBeUndefined();
  });
});
