// Progress lines on stderr for steps that take a while: what is happening, and for how long.

/** Runs `work` as a named step: prints when it starts, a heartbeat every 15 s, and its duration. */
export async function step<T>(what: string, work: () => Promise<T>): Promise<T> {
  const started = Date.now();
  console.error(`▶ ${what}`);
  const heartbeat = setInterval(() => {
    console.error(`  … ${what} (${seconds(started)} s so far)`);
  }, 15_000);
  heartbeat.unref();
  try {
    const result = await work();
    console.error(`✓ ${what} (${seconds(started)} s)`);
    return result;
  } catch (error) {
    console.error(`✗ ${what} failed after ${seconds(started)} s`);
    throw error;
  } finally {
    clearInterval(heartbeat);
  }
}

/** Prints one progress note under the current step. */
export function note(message: string): void {
  console.error(`  ${message}`);
}

/** Seconds elapsed since `started` (a Date.now() value), with one decimal. */
export function seconds(started: number): string {
  return ((Date.now() - started) / 1000).toFixed(1);
}
