// A first primary that cannot start: a real kube-apiserver + etcd, the operator, and a real
// PostgreSQL process as its pod (test-support/pod-processes.ts reports a failed start as a kubelet
// does). The cause reaches the cluster's status and an Event, and correcting the spec is a way out.
import { describe, expect, it } from 'vitest';
import { waitUntil } from '@homeostat/testing';
import { builtin, findCondition } from '@homeostat/reconcile';
import { postgresClusters } from '../api/postgres-cluster-types.ts';
import { podClusterSuite } from '../test-support/pod-cluster.ts';

describe('a first primary that cannot start: real kube-apiserver, real PostgreSQL as its pod', () => {
  const { client, namespace, cluster, get, events, slow } = podClusterSuite({
    namespace: `pg-fail-${process.pid}`,
    cluster: 'broken',
    // A misspelt parameter: a name the API server cannot know PostgreSQL lacks.
    spec: { instances: 1, postgresql: { parameters: { shared_bufers: '16MB' } } },
  });

  it('reports the cause in the Degraded condition, the phase and one Event', async () => {
    const cause = 'unrecognized configuration parameter "shared_bufers"';
    await waitUntil(
      'Degraded: InstanceFailing',
      async () => findCondition((await get()).status?.conditions, 'Degraded')?.reason === 'InstanceFailing',
      slow,
    );
    // A few more failed starts with the same cause: still one Event.
    await waitUntil(
      'three failed starts',
      async () => {
        const pod = await client.get(builtin.pods, `${cluster}-0`, namespace);
        return (pod.status?.containerStatuses?.[0]?.restartCount ?? 0) >= 3;
      },
      slow,
    );
    const status = (await get()).status;
    expect(status?.phase).toBe('Degraded');
    expect(findCondition(status?.conditions, 'Degraded')?.message).toMatch(
      new RegExp(`^broken-0: the configuration is not valid: ${cause}`),
    );
    const failing = await events('InstanceFailing');
    expect(failing).toHaveLength(1);
    expect(failing[0]?.type).toBe('Warning');
    expect(failing[0]?.note).toContain(cause);
  });

  it('starts once the parameter is corrected: the failing pod is replaced with the new spec', async () => {
    await client.patch(
      postgresClusters,
      cluster,
      namespace,
      { spec: { postgresql: { parameters: { shared_bufers: null, shared_buffers: '16MB' } } } },
      { patchType: 'merge' },
    );
    await waitUntil('broken Healthy', async () => (await get()).status?.phase === 'Healthy', slow);
    expect(findCondition((await get()).status?.conditions, 'Degraded')).toMatchObject({
      status: 'False',
      reason: 'AsExpected',
    });
  });
});
