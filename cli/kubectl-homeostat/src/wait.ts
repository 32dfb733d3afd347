// Waiting for a resource to reach a state, polling as `kubectl wait` does, with the reason it is
// not there yet in the error when time runs out.

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** "120s", "2m", "90": seconds, for --timeout. */
export function parseDuration(text: string): number {
  const match = /^(\d+)(s|m)?$/.exec(text);
  if (!match) throw new Error(`--timeout ${text}: expected seconds, e.g. 120s or 2m`);
  return Number(match[1]) * (match[2] === 'm' ? 60 : 1) * 1000;
}

/** Polls `check` every second: done when it returns true; a string is why not yet. */
export async function waitFor(
  what: string,
  timeoutMs: number,
  check: () => Promise<true | string>,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let reason = '';
  for (;;) {
    const result = await check();
    if (result === true) return;
    reason = result;
    if (Date.now() >= deadline) throw new Error(`${what}: not after ${timeoutMs / 1000} s (${reason})`);
    await sleep(1000);
  }
}
