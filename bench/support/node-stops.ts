// The kind nodes a chaos benchmark stops (`docker stop`, as a machine failing). Every node it
// stopped is started again when the run ends, however it ends: a teardown step (a normal end, a
// failed set-up, SIGINT or SIGTERM), the benchmark's own call when it leaves a stuck cluster for a
// person to look at, and last a `docker start` as the process exits (an uncaught error), so no
// run leaves the next one a cluster with a node missing.
import { spawnSync } from 'node:child_process';
import { StoppableNode } from '../../e2e/harness/stoppable-node.ts';
import type { Teardown } from './teardown.ts';

export class NodeStops {
  readonly #teardown: Teardown;
  /** Each node still stopped, with what drops its teardown step once it is started again. */
  readonly #stopped = new Map<StoppableNode, () => void>();
  readonly #stoppedAt = new Map<StoppableNode, number>();
  readonly #starting = new Map<StoppableNode, Promise<void>>();

  constructor(teardown: Teardown) {
    this.#teardown = teardown;
    process.once('exit', () => {
      for (const node of this.#stopped.keys())
        spawnSync('docker', ['start', node.name], { stdio: 'ignore', timeout: 60_000 });
    });
  }

  /** Stops node `name`; it stays stopped until `start`, or until the run ends. */
  async stop(name: string): Promise<StoppableNode> {
    const node = new StoppableNode(name);
    // Newest teardown steps run first: the node is back before namespaces with pods on it go.
    this.#stopped.set(
      node,
      this.#teardown.add(`start node ${name} again`, () => this.start(node)),
    );
    this.#stoppedAt.set(node, Date.now());
    await node.stop();
    return node;
  }

  /**
   * Starts a node this run stopped and waits until the control plane reports it Ready; a second
   * call while it starts (a signal's teardown during a fault's own start) waits for the same start.
   */
  start(node: StoppableNode): Promise<void> {
    const starting = this.#starting.get(node) ?? this.#start(node);
    this.#starting.set(node, starting);
    return starting.finally(() => this.#starting.delete(node));
  }

  async #start(node: StoppableNode): Promise<void> {
    const startedAt = Date.now();
    await node.restore();
    this.#stopped.get(node)?.();
    this.#stopped.delete(node);
    const away = (startedAt - (this.#stoppedAt.get(node) ?? startedAt)) / 1000;
    // How much of a fault's time the node was away by design, and how long it took to come back.
    console.error(
      `  node ${node.name} stopped for ${away.toFixed(1)} s, Ready ${((Date.now() - startedAt) / 1000).toFixed(1)} s after its start`,
    );
  }

  /** Starts every node still stopped (a failed start is reported; the others still start). */
  async startAll(): Promise<void> {
    for (const node of [...this.#stopped.keys()])
      await this.start(node).catch((error: unknown) => console.error(`starting node ${node.name}:`, error));
  }
}
