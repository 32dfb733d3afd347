// How the controller tests reach an EtcdCluster's members (with the client certificate the operator
// made) and wait until the operator reports them all as ready voting members.
import { waitUntil } from '@homeostat/testing';
import { builtin, type KubeClient } from '@homeostat/reconcile';
import { etcdClusters, type EtcdCluster } from '../api/etcd-cluster-types.ts';
import type { EtcdConnection } from '../connection.ts';
import type { MemberAddressing } from '../controllers/member-addressing.ts';

/** A connection to members `0 … size-1` of `cluster`, with the operator-made client certificate. */
export async function clusterConnection(
  client: KubeClient,
  addressing: MemberAddressing,
  cluster: EtcdCluster,
  size: number,
): Promise<EtcdConnection> {
  const name = cluster.metadata?.name ?? '';
  const namespace = cluster.metadata?.namespace ?? '';
  const secret = await client.get(builtin.secrets, `${name}-client-tls`, namespace);
  const file = (key: string) => Buffer.from(secret.data?.[key] ?? '', 'base64');
  const members = Array.from({ length: size }, (_, i) => `${name}-${i}`);
  return {
    endpoints: await Promise.all(members.map(async (m) => (await addressing.urls(cluster, m)).clientUrl)),
    credentials: { rootCertificate: file('ca.crt'), certChain: file('tls.crt'), privateKey: file('tls.key') },
  };
}

/**
 * Waits until status shows `size` ready voting members and the phase Running (and, with
 * `converged`, Progressing False/Converged: nothing left to do); returns the cluster.
 */
export async function waitForVoters(
  client: KubeClient,
  namespace: string,
  name: string,
  size: number,
  poll: { timeoutMs: number; intervalMs: number },
  options: { converged?: boolean } = {},
): Promise<EtcdCluster> {
  await waitUntil(
    `${name}: ${size} ready voting members, Running${options.converged ? ', converged' : ''}`,
    async () => {
      const cluster = await client.find(etcdClusters, name, namespace);
      const status = cluster?.status;
      const voters = status?.members?.filter((m) => m.role === 'Voter' && m.ready) ?? [];
      const progressing = status?.conditions?.find((c) => c.type === 'Progressing');
      return (
        status?.phase === 'Running' &&
        voters.length === size &&
        status.members?.length === size &&
        (!options.converged || progressing?.reason === 'Converged')
      );
    },
    poll,
  );
  return client.get(etcdClusters, name, namespace);
}
