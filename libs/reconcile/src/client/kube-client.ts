import type { KubeConfig } from '@kubernetes/client-node';
import { isNotFound } from './errors.ts';
import { collectionPath, objectPath, type KubeObject, type ResourceType } from './resource-type.ts';
import { defaultRetryPolicy, withRetries, type RetryPolicy } from './retry.ts';
import { KubeTransport } from './transport.ts';

export interface ListOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Page size; the client follows `continue` tokens until the list is complete. Default 500. */
  limit?: number;
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
}

export type PatchType = 'merge' | 'json' | 'strategic';

const patchContentType: Record<PatchType, string> = {
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
  strategic: 'application/strategic-merge-patch+json',
};

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
  readonly #retry: RetryPolicy;

  constructor(kubeConfig: KubeConfig, options: ClientOptions) {
    this.transport = new KubeTransport(kubeConfig, options.userAgent ?? options.fieldManager);
    this.fieldManager = options.fieldManager;
    this.#retry = options.retry ?? defaultRetryPolicy;
  }

  /** Reads one object; throws NotFoundError when it does not exist. */
  async get<T extends KubeObject>(type: ResourceType<T>, name: string, namespace?: string): Promise<T> {
    return withRetries(
      () => this.transport.json<T>({ method: 'GET', path: objectPath(type, name, namespace) }),
      this.#retry,
    );
  }

  /** Reads one object, or undefined when it does not exist. */
  async find<T extends KubeObject>(
    type: ResourceType<T>,
    name: string,
    namespace?: string,
  ): Promise<T | undefined> {
    try {
      return await this.get(type, name, namespace);
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  /** Lists every object (all pages) with a consistent read; returns the list's resourceVersion. */
  async list<T extends KubeObject>(
    type: ResourceType<T>,
    options: ListOptions = {},
    signal?: AbortSignal,
  ): Promise<ListResult<T>> {
    const items: T[] = [];
    let resourceVersion = '';
    let continueToken: string | undefined;
    do {
      const page = await withRetries(
        () =>
          this.transport.json<{ items: T[]; metadata: { resourceVersion: string; continue?: string } }>({
            method: 'GET',
            path: collectionPath(type, options.namespace),
            query: {
              labelSelector: options.labelSelector,
              fieldSelector: options.fieldSelector,
              limit: options.limit ?? 500,
              continue: continueToken,
            },
            ...(signal ? { signal } : {}),
          }),
        this.#retry,
        signal,
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
    options: { force?: boolean; subresource?: 'status' } = {},
  ): Promise<T> {
    const { name, namespace } = describe(obj);
    const body = { ...obj, apiVersion: type.apiVersion, kind: type.kind };
    return withRetries(
      () =>
        this.transport.json<T>({
          method: 'PATCH',
          path: objectPath(type, name, namespace, options.subresource),
          query: { fieldManager: this.fieldManager, force: options.force ?? true },
          contentType: 'application/apply-patch+yaml',
          body,
        }),
      this.#retry,
    );
  }

  /** Server-side applies the status subresource (the object carries name, namespace and status). */
  async applyStatus<T extends KubeObject>(type: ResourceType<T>, obj: Partial<T> & KubeObject): Promise<T> {
    return this.apply(type, obj as T, { subresource: 'status' });
  }

  /** Patches an object or a subresource (merge patch by default). */
  async patch<T extends KubeObject>(
    type: ResourceType<T>,
    name: string,
    namespace: string | undefined,
    patch: unknown,
    options: { patchType?: PatchType; subresource?: string } = {},
  ): Promise<T> {
    return withRetries(
      () =>
        this.transport.json<T>({
          method: 'PATCH',
          path: objectPath(type, name, namespace, options.subresource),
          query: { fieldManager: this.fieldManager },
          contentType: patchContentType[options.patchType ?? 'merge'],
          body: patch,
        }),
      this.#retry,
    );
  }

  /** Merge-patches the status subresource. */
  async patchStatus<T extends KubeObject>(
    type: ResourceType<T>,
    name: string,
    namespace: string | undefined,
    status: unknown,
  ): Promise<T> {
    return this.patch(type, name, namespace, { status }, { subresource: 'status' });
  }

  /** Creates an object; throws AlreadyExistsError if the name is taken. */
  async create<T extends KubeObject>(type: ResourceType<T>, obj: T): Promise<T> {
    const { namespace } = describe(obj);
    return withRetries(
      () =>
        this.transport.json<T>({
          method: 'POST',
          path: collectionPath(type, namespace),
          query: { fieldManager: this.fieldManager },
          body: { ...obj, apiVersion: type.apiVersion, kind: type.kind },
        }),
      this.#retry,
    );
  }

  /** Replaces an object (optimistic concurrency on metadata.resourceVersion: ConflictError if stale). */
  async replace<T extends KubeObject>(type: ResourceType<T>, obj: T): Promise<T> {
    const { name, namespace } = describe(obj);
    return withRetries(
      () =>
        this.transport.json<T>({
          method: 'PUT',
          path: objectPath(type, name, namespace),
          query: { fieldManager: this.fieldManager },
          body: { ...obj, apiVersion: type.apiVersion, kind: type.kind },
        }),
      this.#retry,
    );
  }

  /** Deletes an object; resolves false if it was already gone. */
  async delete(
    type: ResourceType,
    name: string,
    namespace?: string,
    options: { propagationPolicy?: 'Foreground' | 'Background' | 'Orphan'; uid?: string } = {},
  ): Promise<boolean> {
    try {
      await withRetries(
        () =>
          this.transport.json({
            method: 'DELETE',
            path: objectPath(type, name, namespace),
            body: {
              kind: 'DeleteOptions',
              apiVersion: 'v1',
              ...(options.propagationPolicy ? { propagationPolicy: options.propagationPolicy } : {}),
              ...(options.uid ? { preconditions: { uid: options.uid } } : {}),
            },
          }),
        this.#retry,
      );
      return true;
    } catch (error) {
      if (isNotFound(error)) return false;
      throw error;
    }
  }

  /** Closes the client's idle connections. */
  close(): void {
    this.transport.close();
  }
}
