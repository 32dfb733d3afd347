// What the stand-in kubelet of @homeostat/testing (ProcessKubelet) reads and writes, through this
// library's client: that package cannot depend on this one, which uses it in its own tests.
import type { KubeletApi } from '@homeostat/testing';
import type { KubeClient } from '../client/kube-client.ts';
import { builtin } from '../client/resource-type.ts';

export function kubeletApi(client: KubeClient, namespace: string): KubeletApi {
  return {
    listPods: async (labelSelector) => (await client.list(builtin.pods, { namespace, labelSelector })).items,
    listClaims: async (labelSelector) =>
      (await client.list(builtin.persistentVolumeClaims, { namespace, labelSelector })).items,
    findSecret: (name) => client.find(builtin.secrets, name, namespace),
    patchPodStatus: async (pod, status) => {
      await client.patchStatus(builtin.pods, pod, namespace, status);
    },
    releaseClaim: async (claim) => {
      await client.patch(
        builtin.persistentVolumeClaims,
        claim,
        namespace,
        [{ op: 'remove', path: '/metadata/finalizers' }],
        { patchType: 'json' },
      );
    },
  };
}
