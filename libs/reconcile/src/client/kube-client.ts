import type { ClusterSource } from './cluster-access.ts';
import { ConflictError, isNotFound } from './errors.ts';
import { collectionPath, groupOf, objectPath, type KubeObject, type ResourceType } from './resource-type.ts';
import { defaultRetryPolicy, isCreateRetryable, withRetries, type RetryPolicy } from './retry.ts';
import { KubeTransport, type HttpRequest } from './transport.ts';
import { OwnWrites } from './own-writes.ts';
import { isApplied } from '../helpers/applied-state.ts';

export interface ListOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Page size; the client follows `continue` tokens until the list is complete. Default 500. */
  limit?: number;
  signal?: AbortSignal;
}

/** Options every call takes. */
export interface CallOptions {
  /** Stops the call (and its retries) when aborted. */
  signal?: AbortSignal;
}

/** What an apply that may be skipped returns. */
export interface ApplyOutcome<T> {
  /** The object as the API server returned it, or the live one when nothing was written. */
  object: T;
  /** False when the live object already matched, removals included, and nothing was sent. */
  written: boolean;
}

/** The status of a kind's object, addressed by name: what applyStatus sends. */
export interface StatusOf<T extends KubeObject> {
  /** With `uid` (applyStatusIfChanged), only that incarnation of the name takes the status. */
  metadata: { name: string; namespace?: string | undefined; uid?: string | undefined };
  status: T extends { status?: infer S } ? NonNullable<S> : never;
}

export interface ListResult<T> {
  items: T[];
  /** The list's resourceVersion: opaque, only ever handed back to the API server. */
  resourceVersion: string;
}

export interface ClientOptions {
  /** Server-side apply field manager: one per operator. */
  fieldManager: string;
  retry?: RetryPolicy;
  userAgent?: string;
  /** Every call of this client stops when this aborts (a reconcile's signal, a shutdown). */
  signal?: AbortSignal;
  /** Socket inactivity limit per request before its response starts. Default 30 s. */
  requestTimeoutMs?: number;
  /**
   * Remember the resourceVersion of each write, so that applyIfChanged never skips on a cached copy
   * older than it (see own-writes.ts). Default true; off for objects nothing applies with
   * applyIfChanged, such as Events, whose writes would only take memory.
   */
  rememberWrites?: boolean;
}

export type PatchType = 'merge' | 'json' | 'strategic';

const patchContentType: Record<PatchType, string> = {
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
  strategic: 'application/strategic-merge-patch+json',
};

// Every client on one transport (the manager's, each reconcile's withSignal, a secondary field
// manager's, an operator's own `new KubeClient(transport, …)`) shares one record of its writes.
const ownWritesByTransport = new WeakMap<KubeTransport, OwnWrites>();

function ownWritesOf(transport: KubeTransport): OwnWrites {
  let writes = ownWritesByTransport.get(transport);
  if (!writes) ownWritesByTransport.set(transport, (writes = new OwnWrites()));
  return writes;
}

/** The object a write changes, whichever API version or subresource the write went through. */
function writeKey(type: ResourceType, name: string, namespace: string | undefined): string {
  return `${groupOf(type)}/${type.plural}/${type.namespaced ? (namespace ?? '') : ''}/${name}`;
}

// Subresources whose answer carries the object's own resourceVersion (a Scale carries its
// parent's); after a write to any other, the object's new version is not known.
const answeredWithObjectVersion = new Set(['status', 'scale']);

function describe(obj: KubeObject): { name: string; namespace: string | undefined } {
  const name = obj.metadata?.name;
  if (!name) throw new Error(`a ${obj.kind ?? 'object'} without metadata.name cannot be written`);
  return { name, namespace: obj.metadata?.namespace };
}

/**
 * A typed Kubernetes client: get, list, server-side apply, status writes, patch, create and
 * delete for built-in kinds and CRDs alike. Retries throttling, 5xx and connection failures with
 * backoff (honouring Retry-After); conflicts and other refusals surface as typed errors.
 */
export class KubeClient {
  readonly transport: KubeTransport;
  readonly fieldManager: string;
  readonly #options: ClientOptions;
  readonly #retry: RetryPolicy;
  readonly #ownWrites: OwnWrites;

  /**
   * A client on its own connection pool, or (given a transport) sharing another client's, and
   * with it the record of writes that keeps applyIfChanged from skipping on an older cached copy.
   */
  constructor(source: ClusterSource | KubeTransport, options: ClientOptions) {
    this.transport =
      source instanceof KubeTransport
        ? source
        : new KubeTransport(source, options.userAgent ?? options.fieldManager);
    this.fieldManager = options.fieldManager;
    this.#options = options;
    this.#retry = options.retry ?? defaultRetryPolicy;
    this.#ownWrites = ownWritesOf(this.transport);
  }

  /** The same client (same connections), every call of which stops when `signal` aborts. */
  withSignal(signal: AbortSignal): KubeClient {
    const signals = this.#options.signal ? [this.#options.signal, signal] : [signal];
    return new KubeClient(this.transport, { ...this.#options, signal: AbortSignal.any(signals) });
  }

  /** The same client with other options (retries, timeouts), on the same connections. */
  withOptions(options: Partial<ClientOptions>): KubeClient {
    return new KubeClient(this.transport, { ...this.#options, ...options });
  }

  #signal(call: CallOptions | undefined): AbortSignal | undefined {
    const signals = [this.#options.signal, call?.signal].filter((s): s is AbortSignal => s !== undefined);
    if (signals.length <= 1) return signals[0];
    return AbortSignal.any(signals);
  }

  // One request with this client's signal and timeout, retried by its policy.
  #send<R>(
    request: HttpRequest,
    call: CallOptions | undefined,
    retryable?: (error: unknown) => boolean,
  ): Promise<R> {
    const signal = this.#signal(call);
    const req: HttpRequest = {
      ...request,
      ...(signal ? { signal } : {}),
      ...(this.#options.requestTimeoutMs ? { timeoutMs: this.#options.requestTimeoutMs } : {}),
    };
    return withRetries(() => this.transport.json<R>(req), this.#retry, signal, retryable);
  }

  // A write of one object: until its answer, and then until the cache shows the version it
  // answered, skip decisions about that object do not trust the cache (see own-writes.ts).
  async #write<T extends KubeObject>(
    target: {
      type: ResourceType;
      name: string;
      namespace: string | undefined;
      subresource?: string | undefined;
    },
    request: HttpRequest,
    call: CallOptions | undefined,
  ): Promise<T> {
    if (this.#options.rememberWrites === false) return this.#send<T>(request, call);
    const key = writeKey(target.type, target.name, target.namespace);
    this.#ownWrites.sending(key);
    const answer = await this.#send<T>(request, call);
    const knowsVersion = !target.subresource || answeredWithObjectVersion.has(target.subresource);
    this.#ownWrites.answered(key, knowsVersion ? answer.metadata?.resourceVersion : undefined);
    return answer;
  }

  // Whether `live` shows every field `desired` sets, and is no older than this process's last
  // write of the object: a skip decided on an older copy could leave that write's value in place.
  #isCurrentAndApplied(key: string, desired: object, live: KubeObject, subresource?: 'status'): boolean {
    if (this.#ownWrites.mayBeOlder(key, live)) return false;
    return isApplied(desired, live, {
      fieldManager: this.fieldManager,
      ...(subresource ? { subresource } : {}),
    });
  }

  // An apply sent on a copy that might have been older answered with the copy's own version: it
  // changed nothing, so the copy was current and nothing is left to wait for.
  #settleIfUnchanged(key: string, live: KubeObject | undefined, answer: KubeObject): void {
    const version = live?.metadata?.resourceVersion;
    if (version !== undefined && answer.metadata?.resourceVersion === version)
      this.#ownWrites.settled(key, version);
  }

  /** Reads one object; throws NotFoundError when it does not exist. */
  async get<T extends KubeObject>(
    type: ResourceType<T>,
    name: string,
    namespace?: string,
    call?: CallOptions,
  ): Promise<T> {
    return this.#send<T>({ method: 'GET', path: objectPath(type, name, namespace) }, call);
  }

  /**
   * `copy` when it is at least this process's last write of the object; else the object read
   * afresh (undefined when it is gone). The informer cache shows a write only once its watch event
   * arrives, so a decision about what the object already says (a condition that already reports a
   * problem, so no Event is due) must not be taken from a copy the cache has not updated yet.
   */
  async latest<T extends KubeObject>(
    type: ResourceType<T>,
    copy: T,
    call?: CallOptions,
  ): Promise<T | undefined> {
    const { name, namespace } = describe(copy);
    if (!this.#ownWrites.mayBeOlder(writeKey(type, name, namespace), copy)) return copy;
    return this.find(type, name, namespace, call);
  }

  /** Reads one object, or undefined when it does not exist. */
  async find<T extends KubeObject>(
    type: ResourceType<T>,
    name: string,
    namespace?: string,
    call?: CallOptions,
  ): Promise<T | undefined> {
    try {
      return await this.get(type, name, namespace, call);
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  /** Lists every object (all pages) with a consistent read; returns the list's resourceVersion. */
  async list<T extends KubeObject>(type: ResourceType<T>, options: ListOptions = {}): Promise<ListResult<T>> {
    const items: T[] = [];
    let resourceVersion = '';
    let continueToken: string | undefined;
    do {
      const page = await this.#send<{ items: T[]; metadata: { resourceVersion: string; continue?: string } }>(
        {
          method: 'GET',
          path: collectionPath(type, options.namespace),
          query: {
            labelSelector: options.labelSelector,
            fieldSelector: options.fieldSelector,
            limit: options.limit ?? 500,
            continue: continueToken,
          },
        },
        options,
      );
      // A list response omits apiVersion/kind on its items; put them back for callers.
      for (const item of page.items) items.push({ apiVersion: type.apiVersion, kind: type.kind, ...item });
      resourceVersion = page.metadata.resourceVersion;
      continueToken = page.metadata.continue || undefined;
    } while (continueToken);
    return { items, resourceVersion };
  }

  /**
   * Server-side apply: the object states the fields this operator owns; the API server merges
   * them and records this client's field manager. `force` takes over conflicting fields.
   */
  async apply<T extends KubeObject>(
    type: ResourceType<T>,
    obj: T,
    options: { force?: boolean; subresource?: 'status' } & CallOptions = {},
  ): Promise<T> {
    const { name, namespace } = describe(obj);
    return this.#write<T>(
      { type, name, namespace, subresource: options.subresource },
      {
        method: 'PATCH',
        path: objectPath(type, name, namespace, options.subresource),
        query: { fieldManager: this.fieldManager, force: options.force ?? true },
        contentType: 'application/apply-patch+yaml',
        body: { ...obj, apiVersion: type.apiVersion, kind: type.kind },
      },
      options,
    );
  }

  /**
   * Server-side applies `desired` unless `live` (the cached object) already matches it: every
   * field it sets has that value, and no field this client's manager owns has been dropped from it.
   * A converged object costs no request; a removed field is removed.
   */
  async applyIfChanged<T extends KubeObject>(
    type: ResourceType<T>,
    desired: T,
    live: T | undefined,
    options: { force?: boolean } & CallOptions = {},
  ): Promise<ApplyOutcome<T>> {
    const { name, namespace } = describe(desired);
    const key = writeKey(type, name, namespace);
    if (live && this.#isCurrentAndApplied(key, desired, live)) return { object: live, written: false };
    const object = await this.apply(type, desired, options);
    this.#settleIfUnchanged(key, live, object);
    return { object, written: true };
  }

  /**
   * Server-side applies the status subresource (the object carries name, namespace and status).
   * With `metadata.uid`, only that incarnation of the name takes it: otherwise a ConflictError,
   * nothing written.
   */
  async applyStatus<T extends KubeObject>(
    type: ResourceType<T>,
    obj: StatusOf<T>,
    call?: CallOptions,
  ): Promise<T> {
    const { name, namespace, uid } = obj.metadata;
    if (uid !== undefined) {
      // Server-side apply takes no uid precondition: the object is read first, and only the
      // moment between the read and the write is left open.
      const now = await this.find(type, name, namespace, call);
      if (now?.metadata?.uid !== uid) {
        throw new ConflictError('PATCH', objectPath(type, name, namespace, 'status'), 409, {
          reason: 'Conflict',
          message: `${type.kind} ${namespace ? `${namespace}/` : ''}${name} is ${now ? `another object now (uid ${now.metadata?.uid ?? '?'})` : 'gone'}; the status computed for uid ${uid} is not written`,
        });
      }
    }
    return this.#write<T>(
      { type, name, namespace, subresource: 'status' },
      {
        method: 'PATCH',
        path: objectPath(type, name, namespace, 'status'),
        query: { fieldManager: this.fieldManager, force: true },
        contentType: 'application/apply-patch+yaml',
        body: { ...obj, apiVersion: type.apiVersion, kind: type.kind },
      },
      call,
    );
  }

  /**
   * Applies the status unless `live` already carries it (removals included); see applyIfChanged.
   * The status was computed from `live`, so it goes to that incarnation only (`live`'s uid, see
   * applyStatus): when the name now holds another object (deleted and made again while a
   * reconcile of the old one was in flight), it throws a ConflictError and writes nothing.
   */
  async applyStatusIfChanged<T extends KubeObject>(
    type: ResourceType<T>,
    desired: StatusOf<T>,
    live: T | undefined,
    call?: CallOptions,
  ): Promise<ApplyOutcome<T>> {
    const key = writeKey(type, desired.metadata.name, desired.metadata.namespace);
    if (live && this.#isCurrentAndApplied(key, desired, live, 'status'))
      return { object: live, written: false };
    const uid = desired.metadata.uid ?? live?.metadata?.uid;
    const object = await this.applyStatus(
      type,
      uid === undefined ? desired : { ...desired, metadata: { ...desired.metadata, uid } },
      call,
    );
    this.#settleIfUnchanged(key, live, object);
    return { object, written: true };
  }

  /** Patches an object or a subresource (merge patch by default). */
  async patch<T extends KubeObject>(
    type: ResourceType<T>,
    name: string,
    namespace: string | undefined,
    patch: unknown,
    options: { patchType?: PatchType; subresource?: string } & CallOptions = {},
  ): Promise<T> {
    return this.#write<T>(
      { type, name, namespace, subresource: options.subresource },
      {
        method: 'PATCH',
        path: objectPath(type, name, namespace, options.subresource),
        query: { fieldManager: this.fieldManager },
        contentType: patchContentType[options.patchType ?? 'merge'],
        body: patch,
      },
      options,
    );
  }

  /** Merge-patches the status subresource. */
  async patchStatus<T extends KubeObject>(
    type: ResourceType<T>,
    name: string,
    namespace: string | undefined,
    status: unknown,
    call?: CallOptions,
  ): Promise<T> {
    return this.patch(type, name, namespace, { status }, { subresource: 'status', ...call });
  }

  /**
   * Creates an object; throws AlreadyExistsError if the name is taken. Retried only where a
   * retry cannot make a duplicate (see isCreateRetryable).
   */
  async create<T extends KubeObject>(type: ResourceType<T>, obj: T, call?: CallOptions): Promise<T> {
    const generatedName = !obj.metadata?.name && Boolean(obj.metadata?.generateName);
    if (!generatedName) describe(obj);
    const remember = this.#options.rememberWrites !== false;
    const namespace = obj.metadata?.namespace;
    if (remember && obj.metadata?.name) this.#ownWrites.sending(writeKey(type, obj.metadata.name, namespace));
    const created = await this.#send<T>(
      {
        method: 'POST',
        path: collectionPath(type, namespace),
        query: { fieldManager: this.fieldManager },
        body: { ...obj, apiVersion: type.apiVersion, kind: type.kind },
      },
      call,
      (error) => isCreateRetryable(error, generatedName),
    );
    const name = created.metadata?.name;
    if (remember && name)
      this.#ownWrites.answered(writeKey(type, name, namespace), created.metadata?.resourceVersion);
    return created;
  }

  /** Replaces an object (optimistic concurrency on metadata.resourceVersion: ConflictError if stale). */
  async replace<T extends KubeObject>(type: ResourceType<T>, obj: T, call?: CallOptions): Promise<T> {
    const { name, namespace } = describe(obj);
    return this.#write<T>(
      { type, name, namespace },
      {
        method: 'PUT',
        path: objectPath(type, name, namespace),
        query: { fieldManager: this.fieldManager },
        body: { ...obj, apiVersion: type.apiVersion, kind: type.kind },
      },
      call,
    );
  }

  /**
   * Deletes an object; resolves false if it was already gone. `gracePeriodSeconds` overrides the
   * object's own (a pod's terminationGracePeriodSeconds; 0 removes a pod at once, without waiting
   * for its kubelet), `uid` deletes only that incarnation of the name.
   */
  async delete(
    type: ResourceType,
    name: string,
    namespace?: string,
    options: {
      propagationPolicy?: 'Foreground' | 'Background' | 'Orphan';
      uid?: string;
      gracePeriodSeconds?: number;
    } & CallOptions = {},
  ): Promise<boolean> {
    try {
      await this.#send(
        {
          method: 'DELETE',
          path: objectPath(type, name, namespace),
          body: {
            kind: 'DeleteOptions',
            apiVersion: 'v1',
            ...(options.propagationPolicy ? { propagationPolicy: options.propagationPolicy } : {}),
            ...(options.uid ? { preconditions: { uid: options.uid } } : {}),
            ...(options.gracePeriodSeconds === undefined
              ? {}
              : { gracePeriodSeconds: options.gracePeriodSeconds }),
          },
        },
        options,
      );
      this.#ownWrites.forget(writeKey(type, name, namespace));
      return true;
    } catch (error) {
      if (!isNotFound(error)) throw error;
      this.#ownWrites.forget(writeKey(type, name, namespace));
      return false;
    }
  }

  /** Closes the client's idle connections. */
  close(): void {
    this.transport.close();
  }
}
