// What a suite needs to know to act on a kind cluster's nodes: `npm run e2e -- --cluster kind`
// names the cluster and its worker count in the environment (and DOCKER_HOST, when its nodes run
// on a Docker daemon of their own), so `docker stop <node name>` reaches a node's container.

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
