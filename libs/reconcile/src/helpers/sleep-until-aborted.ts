import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Waits `ms`, or less when `signal` aborts first, and never rejects: the loops that wait (a watch
 * restarting, a Lease renewing, a request retried) look at the signal themselves after waiting.
 */
export async function sleepUntilAborted(ms: number, signal?: AbortSignal): Promise<void> {
  await sleep(ms, undefined, signal ? { signal } : {}).catch((error: unknown) => {
    if (!(error instanceof Error && error.name === 'AbortError')) throw error;
  });
}
