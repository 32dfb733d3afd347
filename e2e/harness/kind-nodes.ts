// What a suite needs to know to act on a kind cluster's nodes: `npm run e2e -- --cluster kind` (or
// a chaos benchmark's `--cluster kind`) names the cluster and its worker count in the environment
// (and DOCKER_HOST, when its nodes run on a Docker daemon of their own), so `docker stop <node
// name>` reaches a node's container.

export interface KindClusterUnderTest {
  name: string;
  workers: number;
}

/** The kind cluster the suites run on, or undefined on any other cluster. */
export function kindClusterUnderTest(): KindClusterUnderTest | undefined {
  const name = process.env['HOMEOSTAT_KIND_CLUSTER'];
  if (!name) return undefined;
  return { name, workers: Number(process.env['HOMEOSTAT_KIND_WORKERS'] ?? '0') };
}

/** Whether `kind` (by default the cluster under test) is a kind cluster of three or more workers. */
export function isMultiNodeKind(kind = kindClusterUnderTest()): boolean {
  return kind !== undefined && kind.workers >= 3;
}

/**
 * Names `kind` as the cluster under test for this process and the processes it starts (the
 * suites, a chaos benchmark), with KUBECONFIG pointing at it.
 */
export function useKindClusterUnderTest(kind: KindClusterUnderTest, kubeconfig: string): void {
  Object.assign(process.env, {
    KUBECONFIG: kubeconfig,
    HOMEOSTAT_KIND_CLUSTER: kind.name,
    HOMEOSTAT_KIND_WORKERS: String(kind.workers),
  });
}

/**
 * The command line that runs `command` on node `node`: inside the node's container on a kind
 * cluster (`docker exec`, as root in the node's namespaces), as it is on the local cluster, whose
 * one node is this machine.
 */
export function onNode(node: string, command: readonly string[]): string[] {
  return kindClusterUnderTest() ? ['docker', 'exec', node, ...command] : [...command];
}
