// A rolling restart whose pod deletion a ValidatingAdmissionPolicy refuses must not switch failover
// off: the refusal waits in status while a quiet primary is failed over. Real kube-apiserver, real
// PostgreSQL processes as the pods (test-support/pod-processes.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '@homeostat/testing';
import { sharedKubeConfig } from '@homeostat/testing/shared';
import { KubeClient, resourceType, type KubeObject, type Manager } from '@homeostat/reconcile';
import { memoryLogger } from '@homeostat/reconcile/testing';
import { postgresClusters } from '../api/postgres-cluster-types.ts';
import { PodProcesses } from '../test-support/pod-processes.ts';
import {
  clusterReader,
  createRequiredCluster,
  podOperator,
  prepareNamespace,
  settled,
} from '../test-support/pod-cluster.ts';

interface WithSpec extends KubeObject {
  spec: Record<string, unknown>;
}
const admission = 'admissionregistration.k8s.io/v1';
const policies = resourceType<WithSpec>(
  admission,
  'ValidatingAdmissionPolicy',
  'validatingadmissionpolicies',
  false,
);
const bindings = resourceType<WithSpec>(
  admission,
  'ValidatingAdmissionPolicyBinding',
  'validatingadmissionpolicybindings',
  false,
);

const kubeConfig = sharedKubeConfig();
const namespace = `pg-rollout-refused-${process.pid}`;
const policy = `keep-replica-pods-${process.pid}`;
const cluster = 'orders';
const client = new KubeClient(kubeConfig, { fieldManager: 'test-user' });
const { log, lines } = memoryLogger();
const { get, events, slow } = clusterReader(client, namespace, cluster, lines);

describe('a rolling restart refused by an admission policy: real kube-apiserver, real PostgreSQL processes', () => {
  const pods = new PodProcesses(client, namespace, cluster);
  let manager: Manager;

  beforeAll(async () => {
    await prepareNamespace(kubeConfig, client, namespace);
    manager = podOperator(kubeConfig, namespace, log, pods);
    await manager.start();
    await createRequiredCluster(client, namespace, cluster);
    await pods.start();
  });

  afterAll(async () => {
    await client.delete(bindings, policy).catch(() => undefined);
    await client.delete(policies, policy).catch(() => undefined);
    await manager?.stop();
    await pods.stop();
    client.close();
  });

  it('fails over from a quiet primary while the restart of a replica is refused, and says so', async () => {
    await waitUntil('orders Healthy with 3 ready instances', async () => settled(await get()), slow);
    const old = (await get()).status?.currentPrimary ?? '';
    // Only the primary's pod may be deleted (the failover's fence); every replica's deletion is refused.
    await client.create(policies, {
      apiVersion: admission,
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: policy },
      spec: {
        failurePolicy: 'Fail',
        matchConstraints: {
          resourceRules: [
            { apiGroups: [''], apiVersions: ['v1'], operations: ['DELETE'], resources: ['pods'] },
          ],
        },
        validations: [{ expression: `oldObject.metadata.name == '${old}'`, message: 'replica pods stay' }],
      },
    });
    await client.create(bindings, {
      apiVersion: admission,
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name: policy },
      spec: {
        policyName: policy,
        validationActions: ['Deny'],
        matchResources: { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': namespace } } },
      },
    });
    // A new pod spec: the rolling restart deletes a replica first, which the policy refuses.
    await client.patch(
      postgresClusters,
      cluster,
      namespace,
      { spec: { resources: { requests: { cpu: '50m' } } } },
      { patchType: 'merge' },
    );
    // Long enough for a key backing off on this refusal (5 ms doubling) to wait longer than the
    // failover below is given.
    await new Promise((r) => setTimeout(r, 30_000));

    pods.instance(old).freeze();
    await waitUntil(
      'a replica promoted in place of the quiet primary',
      async () => {
        const status = (await get()).status;
        return status?.currentPrimary !== old && !status?.operation;
      },
      { ...slow, timeoutMs: 30_000 },
    );
    await waitUntil(
      'FailoverCompleted recorded',
      async () => (await events('FailoverCompleted')).length > 0,
      slow,
    );
    await waitUntil(
      'the refused restart in status',
      async () =>
        /deleting Pod orders-\d \(rolling restart\): .*replica pods stay/.test(
          (await get()).status?.conditions?.find((c) => c.type === 'Degraded' && c.reason === 'ApplyFailed')
            ?.message ?? '',
        ),
      slow,
    );
    expect((await events('ApplyFailed')).some((e) => /rolling restart/.test(e.note ?? ''))).toBe(true);
  }, 300_000);
});
