// The resourceVersion of the last write this process made to each object, so that a "nothing to
// write" decision is never taken against a copy older than that write.
//
// A reconcile decides from the informer cache, which shows an object's new version only once its
// watch event has arrived: milliseconds after a write, seconds under load. If the next reconcile
// of that object comes sooner, and what it wants equals the old copy, skipping the apply would
// leave the API server holding the previous reconcile's value: a status written as "2 of 3 Ready"
// stays so when the third pod is Ready again before the cache saw the write, and a controller that
// ignores status-only changes of its own object (generationChanged) is never woken to fix it.
//
// resourceVersions are opaque: they are only ever compared for equality here. A copy carrying the
// version this process last wrote is at least that write; any other copy of a recently written
// object may be older, so the write is sent. If its answer carries the copy's own version, the
// apply changed nothing and the copy was current: the record is dropped (else every later change
// by someone else, a Deployment's status, would cost one more apply).
import type { KubeObject } from './resource-type.ts';

export interface OwnWritesOptions {
  /**
   * How long a write is remembered when no copy of its version is seen (its watch event lost, the
   * object written only by create or patch): longer than a broken watch takes to resume.
   */
  forgetAfterMs?: number;
  /** At most this many writes are remembered; the oldest go first (their objects' cache is then trusted). */
  maxRemembered?: number;
  /** A monotonic clock in ms. */
  now?: () => number;
}

interface Written {
  /** Undefined while the write is in flight, or when its answer did not carry the object's version. */
  readonly resourceVersion: string | undefined;
  readonly at: number;
}

export class OwnWrites {
  readonly #written = new Map<string, Written>();
  readonly #forgetAfterMs: number;
  readonly #maxRemembered: number;
  readonly #now: () => number;

  constructor(options: OwnWritesOptions = {}) {
    this.#forgetAfterMs = options.forgetAfterMs ?? 5 * 60_000;
    this.#maxRemembered = options.maxRemembered ?? 10_000;
    this.#now = options.now ?? (() => performance.now());
  }

  /**
   * A write of the object is about to be sent: until its answer, any copy may be older than it (an
   * answer lost to an abort or a timeout may still have been written).
   */
  sending(key: string): void {
    this.#remember(key, undefined);
  }

  /** The API server answered the write; `resourceVersion` undefined when the answer does not say. */
  answered(key: string, resourceVersion: string | undefined): void {
    this.#remember(key, resourceVersion);
  }

  /**
   * A copy of `resourceVersion` is known to be current (an apply changed nothing on it): drops the
   * record if it is still that version's.
   */
  settled(key: string, resourceVersion: string | undefined): void {
    if (resourceVersion !== undefined && this.#written.get(key)?.resourceVersion === resourceVersion) {
      this.#written.delete(key);
    }
  }

  /** The object is gone: nothing of it is left to wait for. */
  forget(key: string): void {
    this.#written.delete(key);
  }

  /**
   * Whether `copy` may be older than this process's last write of the object. A copy of exactly
   * that version ends the wait.
   */
  mayBeOlder(key: string, copy: KubeObject): boolean {
    const written = this.#written.get(key);
    if (!written) return false;
    const current =
      written.resourceVersion !== undefined && copy.metadata?.resourceVersion === written.resourceVersion;
    if (current || this.#expired(written)) {
      this.#written.delete(key);
      return false;
    }
    return true;
  }

  /** How many writes are remembered (for tests and memory accounting). */
  get size(): number {
    return this.#written.size;
  }

  #remember(key: string, resourceVersion: string | undefined): void {
    this.#written.delete(key); // re-inserted last: the map stays in the order of writes
    this.#written.set(key, { resourceVersion, at: this.#now() });
    // Oldest first, so this stops at the first write still remembered.
    for (const [oldest, written] of this.#written) {
      if (this.#written.size <= this.#maxRemembered && !this.#expired(written)) return;
      this.#written.delete(oldest);
    }
  }

  #expired(written: Written): boolean {
    return this.#now() - written.at > this.#forgetAfterMs;
  }
}
