// A rolling restart whose pod deletion a ValidatingAdmissionPolicy refuses must not switch failover
// off: the refusal waits in status while a quiet primary is failed over. Real kube-apiserver, real
// PostgreSQL processes as the pods (test-support/pod-processes.ts).
import { describe, expect, it } from 'vitest';
import { waitUntil } from '@homeostat/testing';
import { builtin, resourceType, type KubeObject } from '@homeostat/reconcile';
import { postgresClusters } from '../api/postgres-cluster-types.ts';
import { failOverWhileRefused, podClusterSuite, settled } from '../test-support/pod-cluster.ts';

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

const policy = `keep-replica-pods-${process.pid}`;

describe('a rolling restart refused by an admission policy: real kube-apiserver, real PostgreSQL processes', () => {
  const suite = podClusterSuite({
    namespace: `pg-rollout-refused-${process.pid}`,
    cluster: 'orders',
    tearDown: async ({ client }) => {
      await client.delete(bindings, policy).catch(() => undefined);
      await client.delete(policies, policy).catch(() => undefined);
    },
  });
  const { client, namespace, cluster, pods, get, events, slow } = suite;

  it('fails over from a quiet primary while the restart of a replica is refused, and says so', async () => {
    await waitUntil('orders Healthy with 3 ready instances', async () => settled(await get()), slow);
    const old = (await get()).status?.currentPrimary ?? '';
    // Only the primary's pod may be deleted (the failover's fence); every replica's deletion is
    // refused, and so is the sentinel ConfigMap's, which shows when the policy is in force.
    await client.create(policies, {
      apiVersion: admission,
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: policy },
      spec: {
        failurePolicy: 'Fail',
        matchConstraints: {
          resourceRules: [
            {
              apiGroups: [''],
              apiVersions: ['v1'],
              operations: ['DELETE'],
              resources: ['pods', 'configmaps'],
            },
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
    const sentinel = { metadata: { name: 'sentinel', namespace } };
    await waitUntil(
      'the policy in force',
      async () => {
        // Made again while a deletion still goes through.
        await client.create(builtin.configMaps, sentinel).catch(() => undefined);
        return client.delete(builtin.configMaps, 'sentinel', namespace).then(
          () => false,
          () => true,
        );
      },
      slow,
    );
    // A new pod spec: the rolling restart deletes a replica first, which the policy refuses.
    await client.patch(
      postgresClusters,
      cluster,
      namespace,
      { spec: { resources: { requests: { cpu: '50m' } } } },
      { patchType: 'merge' },
    );
    const completed = await failOverWhileRefused(pods, suite, old);
    expect(completed?.note).toMatch(new RegExp(`replacing ${old}`));
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
