import { rm } from 'node:fs/promises';
import type { EtcdTestCluster } from '@homeostat/testing/etcd';
import type { DesiredMember, MemberRuntime } from '../membership/membership-reconciler.ts';

/** Member processes on loopback for the reconciler: what pods will be in the operator. */
export function localMemberRuntime(cluster: EtcdTestCluster): MemberRuntime {
  return {
    async ensureRunning(member, join, fresh) {
      if (cluster.members.get(member.name)?.process.isRunning()) return;
      const address = await cluster.address(member.name);
      if (fresh) await rm(address.dataDir, { recursive: true, force: true });
      // A learner reports unhealthy until it is promoted: wait only for its client port.
      await cluster.start(
        address,
        {
          initialCluster: join.initialCluster,
          initialClusterState: join.initialClusterState,
          initialClusterToken: cluster.token,
        },
        false,
      );
    },
    async ensureStopped(member) {
      const running = [...cluster.members.values()].find(
        (m) => m.name === member.name || m.peerUrl === member.peerUrl,
      );
      await running?.process.stop(2000);
    },
  };
}

/** The members `names` of `cluster` (allocating free loopback ports for new ones) as desired members. */
export async function desiredMembers(
  cluster: EtcdTestCluster,
  names: readonly string[],
): Promise<DesiredMember[]> {
  const result: DesiredMember[] = [];
  for (const name of names) {
    const address = await cluster.address(name);
    result.push({ name, peerUrl: address.peerUrl, clientUrl: address.clientUrl });
  }
  return result;
}
