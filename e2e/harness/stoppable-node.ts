// Nodes of a kind cluster that a suite stops and starts again (the *.kind.e2e.test.ts suites), and
// the check that the suites run on a cluster where that is possible.
import type { V1Node } from '@kubernetes/client-node';
import { waitUntil } from '@homeostat/testing';
import { run } from '../cluster/run-command.ts';
import { getObject } from './cluster-access.ts';
import { isMultiNodeKind, kindClusterUnderTest } from './kind-nodes.ts';

const nodeReady = (node: V1Node | undefined) =>
  node?.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';

/** Waits until the control plane reports node `name` Ready (or NotReady). */
export async function waitForNodeReady(name: string, ready: boolean, timeoutMs = 180_000): Promise<void> {
  await waitUntil(
    `node ${name} ${ready ? 'Ready' : 'NotReady'}`,
    async () => nodeReady(await getObject<V1Node>('node', name)) === ready,
    { timeoutMs, intervalMs: 1000 },
  );
}

/**
 * A node of the kind cluster that a suite stops (`docker stop`, as a machine failing) and starts
 * again. `restore` starts it if it is still stopped, whatever happened: call it in afterAll, so
 * the next suite finds a whole cluster.
 */
export class StoppableNode {
  readonly name: string;
  private stopped = false;

  constructor(name: string) {
    this.name = name;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await run('docker', ['stop', this.name], { timeoutMs: 120_000 });
  }

  /** Starts the node's container and waits until the control plane reports it Ready. */
  async start(): Promise<void> {
    await run('docker', ['start', this.name], { timeoutMs: 120_000 });
    this.stopped = false;
    await waitForNodeReady(this.name, true);
  }

  async restore(): Promise<void> {
    if (this.stopped) await this.start();
  }
}

/**
 * Fails, saying how to run it, unless the suites run on a kind cluster of three or more workers
 * (`kind`: the cluster a run is about to use, when it is not the cluster under test yet).
 */
export function requireMultiNodeKind(
  what: string,
  howToRun = 'npm run e2e -- --cluster kind --workers 3',
  kind = kindClusterUnderTest(),
): void {
  if (!isMultiNodeKind(kind)) throw new Error(`${what}: run it with \`${howToRun}\``);
}

const controlPlaneTaint = 'node-role.kubernetes.io/control-plane';

/**
 * What puts a pod on the kind cluster's control-plane node, which no suite stops (its spec's
 * nodeSelector and tolerations): for what a suite or benchmark needs while a worker is away. The
 * pod's image must be one of `controlPlaneImages` (e2e/kind/images-per-node.ts): only those are
 * loaded into that node.
 */
export function onControlPlanePlacement(): { nodeSelector: Record<string, string>; tolerations: object[] } {
  const kind = kindClusterUnderTest();
  return {
    nodeSelector: { 'kubernetes.io/hostname': `${kind?.name ?? ''}-control-plane` },
    tolerations: [{ key: controlPlaneTaint, operator: 'Exists', effect: 'NoSchedule' }],
  };
}

/**
 * Helm values (`--set` pairs) that run an operator on the kind cluster's control-plane node, which
 * no suite stops: the workers are then the database's nodes alone, and stopping one never takes
 * the operator with it. Operator images are loaded into that node (`controlPlaneImages`).
 */
export function onControlPlaneValues(): Record<string, string> {
  const kind = kindClusterUnderTest();
  return {
    'nodeSelector.kubernetes\\.io/hostname': `${kind?.name ?? ''}-control-plane`,
    'tolerations[0].key': controlPlaneTaint,
    'tolerations[0].operator': 'Exists',
    'tolerations[0].effect': 'NoSchedule',
  };
}
