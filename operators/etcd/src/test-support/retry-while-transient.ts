import { setTimeout as sleep } from 'node:timers/promises';
import { isTransient } from '../errors.ts';

/**
 * Calls `change` again while it fails with a refusal that passes by itself (as the reconcile loop
 * would), until `timeoutMs`; then, or on any other error, throws the last error.
 */
export async function retryWhileTransient<T>(
  change: () => Promise<T>,
  { timeoutMs = 30_000, intervalMs = 250 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await change();
    } catch (error) {
      if (!isTransient(error) || Date.now() > deadline) throw error;
      await sleep(intervalMs);
    }
  }
}
