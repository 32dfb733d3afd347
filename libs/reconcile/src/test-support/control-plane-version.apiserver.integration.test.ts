// The library's control-plane tests run once per end of the supported range (`test` on the newest
// pinned Kubernetes, `test-kubernetes-oldest` on the oldest; tools/kubernetes/README.md). This
// proves each run talks to the release it names, so a broken HOMEOSTAT_KUBERNETES_VERSION plumbing
// cannot quietly test the newest twice.
import { describe, expect, it } from 'vitest';
import { kubernetesVersion, pinnedKubernetesVersion } from '@homeostat/testing';
import { sharedKubeConfig } from '@homeostat/testing/shared';
import { KubeClient } from '../client/kube-client.ts';

describe('the shared control plane', () => {
  it('runs the Kubernetes release HOMEOSTAT_KUBERNETES_VERSION names (the newest when unset)', async () => {
    const client = new KubeClient(sharedKubeConfig(), { fieldManager: 'homeostat-test' });
    try {
      const version = await client.transport.json<{ gitVersion: string }>({
        method: 'GET',
        path: '/version',
      });
      expect(version.gitVersion).toBe(pinnedKubernetesVersion(process.env['HOMEOSTAT_KUBERNETES_VERSION']));
      expect(version.gitVersion).toBe(kubernetesVersion);
    } finally {
      client.close();
    }
  });
});
