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
// object may be older, so the write is sent (a server-side apply that changes nothing is not stored
// and costs no new version) and its answer becomes the version to wait for.
import type { KubeObject } from './resource-type.ts';

export interface OwnWritesOptions {
  /**
   * How long a write is remembered when no copy of its version is seen (its watch event lost in a
   * relist, the object deleted by someone else): afterwards the cache is trusted again.
   */
  forgetAfterMs?: number;
  now?: () => number;
}

interface Written {
  readonly resourceVersion: string;
  readonly at: number;
}

export class OwnWrites {
  readonly #written = new Map<string, Written>();
  readonly #forgetAfterMs: number;
  readonly #now: () => number;

  constructor(options: OwnWritesOptions = {}) {
    this.#forgetAfterMs = options.forgetAfterMs ?? 60_000;
    this.#now = options.now ?? Date.now;
  }

  /** Records what the API server answered to a write of the object at `path`. */
  record(path: string, answer: KubeObject | undefined): void {
    const resourceVersion = answer?.metadata?.resourceVersion;
    this.#written.delete(path); // re-inserted last: the map stays in the order of writes
    if (resourceVersion) this.#written.set(path, { resourceVersion, at: this.#now() });
    this.#forgetExpired();
  }

  /** The object at `path` is gone: nothing of it is left to wait for. */
  forget(path: string): void {
    this.#written.delete(path);
  }

  /**
   * Whether `copy` may be older than this process's last write of the object at `path`. A copy of
   * exactly that version ends the wait.
   */
  mayBeOlder(path: string, copy: KubeObject): boolean {
    const written = this.#written.get(path);
    if (!written) return false;
    if (copy.metadata?.resourceVersion === written.resourceVersion || this.#expired(written)) {
      this.#written.delete(path);
      return false;
    }
    return true;
  }

  /** How many writes are remembered (for tests and memory accounting). */
  get size(): number {
    return this.#written.size;
  }

  #expired(written: Written): boolean {
    return this.#now() - written.at > this.#forgetAfterMs;
  }

  // Oldest first, so this stops at the first write still remembered.
  #forgetExpired(): void {
    for (const [path, written] of this.#written) {
      if (!this.#expired(written)) return;
      this.#written.delete(path);
    }
  }
}
