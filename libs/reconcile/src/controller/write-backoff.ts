// Backoff per object and per write, apart from the key's error backoff: a write the API server
// refuses (a quota, an admission policy, a refused resize) is tried again only as its own backoff
// allows, while the reconcile around it (probing, failing over, healing, the status) runs on its
// own schedule. ADR 0603.
import { WriteFailure } from '../helpers/write-failure.ts';

/** The writes one reconcile makes, each skipped while it backs off after a refusal (ADR 0603). */
export interface Writes {
  /**
   * Runs one write named `what` (e.g. "applying Service db"). A refusal throws a WriteFailure and
   * starts (or doubles) this write's backoff; while it lasts the write is not sent and the last
   * refusal is thrown again, marked `repeated`.
   */
  step<T>(what: string, action: () => Promise<T>): Promise<T>;
  /** As `step`, but a refusal is only recorded (undefined is returned), so the writes after it still run. */
  attempt<T>(what: string, action: () => Promise<T>): Promise<T | undefined>;
  /** The refusals of this reconcile so far, new or repeated, one per write. */
  readonly failures: readonly WriteFailure[];
}

interface Entry {
  failure: WriteFailure;
  /** Refusals in a row; the next wait is base × 2^(failures − 1). */
  failures: number;
  notBefore: number;
  /** The object's generation when refused: a spec change tries the write again at once. */
  generation: number | undefined;
}

/** Per-object, per-write exponential backoff (5 ms doubling to 1000 s, as the key's). */
export class WriteBackoff {
  readonly #entries = new Map<string, Map<string, Entry>>();
  readonly #baseMs: number;
  readonly #maxMs: number;
  readonly #now: () => number;

  constructor(options: { baseMs?: number; maxMs?: number; now?: () => number } = {}) {
    this.#baseMs = options.baseMs ?? 5;
    this.#maxMs = options.maxMs ?? 1_000_000;
    this.#now = options.now ?? (() => performance.now());
  }

  /**
   * The writes of one reconcile of `key`, whose object is at `generation`; `onRefused` hears of each
   * refusal the API server gives (not of repeats), with how long the write now waits.
   */
  begin(
    key: string,
    generation: number | undefined,
    onRefused: (failure: WriteFailure, retryInMs: number) => void = () => undefined,
  ): Writes & { finish(): void } {
    const entries = this.#entries.get(key) ?? new Map<string, Entry>();
    this.#entries.set(key, entries);
    const touched = new Set<string>();
    const failures = new Map<string, WriteFailure>();
    const refuse = (what: string, failure: WriteFailure): never => {
      failures.set(what, failure);
      throw failure;
    };
    const step = async <T>(what: string, action: () => Promise<T>): Promise<T> => {
      touched.add(what);
      const last = entries.get(what);
      const current = last?.generation === generation ? last : undefined;
      if (current && this.#now() < current.notBefore) {
        return refuse(what, current.failure.repeat());
      }
      try {
        const done = await action();
        entries.delete(what);
        return done;
      } catch (error) {
        // Not sent (a name someone else holds, assertOwnedOrAbsent): reported as it is, and
        // looked at again next reconcile, since no request was refused.
        if (error instanceof WriteFailure) return refuse(what, error);
        const failure = new WriteFailure(what, error);
        const count = (current?.failures ?? 0) + 1;
        const waitMs = Math.min(this.#maxMs, this.#baseMs * 2 ** (count - 1));
        entries.set(what, { failure, failures: count, notBefore: this.#now() + waitMs, generation });
        onRefused(failure, waitMs);
        return refuse(what, failure);
      }
    };
    return {
      step,
      attempt: async (what, action) => {
        try {
          return await step(what, action);
        } catch (error) {
          if (error instanceof WriteFailure) return undefined;
          throw error;
        }
      },
      get failures() {
        return [...failures.values()];
      },
      // A write this reconcile did not ask for is no longer wanted: its backoff goes with it.
      finish: () => {
        for (const what of entries.keys()) if (!touched.has(what)) entries.delete(what);
        if (entries.size === 0) this.#entries.delete(key);
      },
    };
  }

  /** How long until the first refused write of `key` may be sent again; undefined when none waits. */
  nextDueMs(key: string): number | undefined {
    const entries = this.#entries.get(key);
    if (!entries?.size) return undefined;
    const now = this.#now();
    return Math.max(0, Math.min(...[...entries.values()].map((e) => e.notBefore - now)));
  }

  /** Drops every backoff of `key` (its object is gone). */
  forget(key: string): void {
    this.#entries.delete(key);
  }
}
