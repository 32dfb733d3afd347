// What a benchmark started must end when the benchmark ends, however it ends. Three layers:
//   - a normal end or an exception: the benchmark's `finally` runs these steps;
//   - SIGINT or SIGTERM: the same steps run, then the process exits 128 + the signal's number;
//   - SIGKILL, or a step that hangs: the processes were started by libs/testing's startProcess, so
//     its exit hook and the kernel (setpriv --pdeathsig) kill them anyway.
import { constants } from 'node:os';

type Step = () => unknown;

// A step that hangs (a delete against an API server that is gone) must not keep a signalled
// benchmark alive; past this, the process exits and the lower layers clean up.
const signalTeardownMs = 30_000;

/** Cleanup steps of one benchmark run, run once, newest first. */
export class Teardown {
  readonly #steps: { what: string; step: Step }[] = [];
  #ran: Promise<void> | undefined;

  /** Adds a step; `what` names it when it fails. Returns a function that drops the step again. */
  add(what: string, step: Step): () => void {
    const entry = { what, step };
    this.#steps.push(entry);
    return () => {
      const at = this.#steps.indexOf(entry);
      if (at >= 0) this.#steps.splice(at, 1);
    };
  }

  /** Runs every step newest first; a failing step is reported and the others still run. */
  run(): Promise<void> {
    this.#ran ??= (async () => {
      for (const { what, step } of [...this.#steps].reverse()) {
        try {
          await step();
        } catch (error) {
          console.error(`teardown: ${what} failed:`, error);
        }
      }
    })();
    return this.#ran;
  }

  /** On SIGINT or SIGTERM: runs the steps (bounded), then exits with 128 + the signal's number. */
  exitOnSignals(label: string): void {
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      process.once(signal, () => {
        const code = 128 + constants.signals[signal];
        console.error(`${label}: ${signal}, stopping what it started`);
        const timer = setTimeout(() => process.exit(code), signalTeardownMs);
        void this.run().finally(() => {
          clearTimeout(timer);
          process.exit(code);
        });
      });
    }
  }
}
