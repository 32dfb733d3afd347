// Which instances of a cluster start from claims an earlier cluster of the same name left behind
// (`storage.retention: Retain`). The operator creates a claim only after it has seen the cluster,
// so a claim created before the cluster was is a retained one. Timestamps have whole seconds:
// strictly earlier is required, and an earlier cluster deleted and created again within its
// claims' own second of creation is not a case a person can bring about.
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import type { PostgresCluster } from '../api/postgres-cluster-types.ts';

const time = (t: Date | string | undefined): number | undefined =>
  t === undefined ? undefined : new Date(t).getTime();

/** The instances (claim names) whose claims are older than `cluster`, sorted. */
export function retainedInstances(
  cluster: PostgresCluster,
  claims: ReadonlyMap<string, V1PersistentVolumeClaim>,
): string[] {
  const born = time(cluster.metadata?.creationTimestamp);
  if (born === undefined) return [];
  return [...claims]
    .filter(([, claim]) => {
      const made = time(claim.metadata?.creationTimestamp);
      return made !== undefined && made < born && !claim.metadata?.deletionTimestamp;
    })
    .map(([name]) => name)
    .sort();
}
