// Runs against the cluster in KUBECONFIG: its default StorageClass provisions a volume for a
// claim that names no class, a non-root pod under Pod Security `restricted` writes to it, another
// pod reads the data back, and deleting the claim deletes the volume. The etcd and PostgreSQL
// operators' members keep their data on exactly such claims.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '@homeostat/testing';
import { operandImages } from '../images/image-names.ts';
import { apply, getObject, kubectl } from '../harness/cluster-access.ts';
import { createTestNamespace, type TestNamespace } from '../harness/test-namespace.ts';
import { memcacheUid } from '../harness/memcached-client.ts';
import { runClientPod } from '../harness/workloads.ts';

interface Claim {
  spec?: { storageClassName?: string; volumeName?: string };
  status?: { phase?: string };
}

describe('default StorageClass of the cluster in KUBECONFIG', () => {
  let namespace: TestNamespace;
  const claim = { name: 'data', mountPath: '/data' };
  // The memcached operand image has a shell and a non-root user: enough for a client pod.
  const client = { image: operandImages.memcached, runAsUser: memcacheUid };

  beforeAll(async () => {
    namespace = await createTestNamespace('e2e-storage');
    await apply([
      {
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: { name: claim.name, namespace: namespace.name },
        spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '16Mi' } } },
      },
    ]);
  });

  afterAll(async () => {
    await namespace?.remove();
  });

  it('binds a claim without a class, keeps what one pod wrote for the next, and deletes the volume with the claim', async () => {
    const writer = await runClientPod({
      ...client,
      namespace: namespace.name,
      name: 'writer',
      claim,
      command: ['sh', '-c', 'echo "written by $(id -u)" > /data/file && cat /data/file'],
    });
    expect(writer.logs.trim(), `writer pod (${writer.phase})`).toBe(`written by ${memcacheUid}`);

    const bound = await getObject<Claim>('persistentvolumeclaim', claim.name, namespace.name);
    expect(bound?.status?.phase).toBe('Bound');
    expect(bound?.spec?.storageClassName).toBe('standard');
    const volume = bound?.spec?.volumeName;
    expect(volume).toBeTruthy();

    const reader = await runClientPod({
      ...client,
      namespace: namespace.name,
      name: 'reader',
      claim,
      command: ['cat', '/data/file'],
    });
    expect(reader.logs.trim(), `reader pod (${reader.phase})`).toBe(`written by ${memcacheUid}`);

    await kubectl(['-n', namespace.name, 'delete', 'pvc', claim.name, '--wait=true', '--timeout=60s']);
    await waitUntil(
      `volume ${volume} deleted with its claim`,
      async () => (await getObject('persistentvolume', volume ?? '')) === undefined,
      { timeoutMs: 120_000, intervalMs: 1000 },
    );
  });
});
