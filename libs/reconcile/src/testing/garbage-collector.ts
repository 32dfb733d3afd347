// A stand-in for the kube-controller-manager's garbage collector, for controller tests whose control
// plane runs none. Like the real one it decides from owner references alone, and it keeps acting:
// once a test lets it collect an owner, every object whose owners are all collected is deleted, now
// and whenever one appears later. That last part matters: a reconcile already in flight when the
// owner was deleted (its cache still held the owner) may make one more pod or claim for it, which
// the real collector removes a moment later; a one-shot sweep would leave it behind for good.
import type { KubeClient } from '../client/kube-client.ts';
import { builtin, type KubeObject, type ResourceType } from '../client/resource-type.ts';

/** What an operator's owned objects usually are. */
const operandKinds: readonly ResourceType<KubeObject>[] = [
  builtin.pods,
  builtin.persistentVolumeClaims,
  builtin.services,
  builtin.podDisruptionBudgets,
  builtin.secrets,
  builtin.configMaps,
];

export class GarbageCollectorStandIn {
  readonly #client: KubeClient;
  readonly #namespace: string;
  readonly #kinds: readonly ResourceType<KubeObject>[];
  readonly #intervalMs: number;
  readonly #collected = new Set<string>();
  #timer: NodeJS.Timeout | undefined;
  #sweep: Promise<string[]> | undefined;
  #stopped = false;

  constructor(
    client: KubeClient,
    namespace: string,
    options: { kinds?: readonly ResourceType<KubeObject>[]; intervalMs?: number } = {},
  ) {
    this.#client = client;
    this.#namespace = namespace;
    this.#kinds = options.kinds ?? operandKinds;
    this.#intervalMs = options.intervalMs ?? 200;
  }

  /**
   * The owner `ownerUid` is gone: deletes what it alone owned (objects with another, live owner
   * stay), then keeps doing so in the background until `stop()`. Returns `Kind/name` of what this
   * first sweep deleted.
   */
  async collect(ownerUid: string): Promise<string[]> {
    this.#collected.add(ownerUid);
    await this.#sweep?.catch(() => undefined);
    const deleted = await this.#sweepOnce();
    this.#schedule();
    return deleted;
  }

  /** Stops the background sweeps (and waits for one in flight). */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#sweep?.catch(() => undefined);
  }

  #schedule(): void {
    if (this.#stopped || this.#timer) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.#sweepOnce()
        .catch(() => undefined)
        .finally(() => this.#schedule());
    }, this.#intervalMs);
  }

  #sweepOnce(): Promise<string[]> {
    const sweep = (async () => {
      const deleted: string[] = [];
      for (const type of this.#kinds) {
        const list = await this.#client.list(type, { namespace: this.#namespace });
        for (const object of list.items) {
          const owners = object.metadata?.ownerReferences ?? [];
          if (owners.length === 0 || !owners.every((o) => this.#collected.has(o.uid))) continue;
          if (object.metadata?.deletionTimestamp) continue;
          const name = object.metadata?.name ?? '';
          // Only this incarnation: an object made again under the name by a live owner stays.
          const uid = object.metadata?.uid ?? '';
          if (await this.#client.delete(type, name, this.#namespace, { uid }).catch(() => false))
            deleted.push(`${type.kind}/${name}`);
        }
      }
      return deleted;
    })();
    this.#sweep = sweep;
    return sweep;
  }
}
