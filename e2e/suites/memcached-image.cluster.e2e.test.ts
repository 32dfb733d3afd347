// Runs against the cluster in KUBECONFIG (kind, the local cluster, any other): the memcached
// operand image as a plain Deployment + Service in a `restricted` namespace, and a client pod
// that stores and reads a value through the Service's DNS name. No operator is involved, so
// this proves the cluster itself: images, pod network (CNI), Services (kube-proxy) and DNS.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operandImages } from '../images/image-names.ts';
import { apply } from '../harness/cluster-access.ts';
import { createTestNamespace, type TestNamespace } from '../harness/test-namespace.ts';
import { memcacheUid, memcachedSetGet } from '../harness/memcached-client.ts';
import { restrictedSecurityContext, servedDeployment, waitForDeployment } from '../harness/workloads.ts';

const labels = { app: 'memcached' };

describe('memcached image on the cluster in KUBECONFIG', () => {
  let namespace: TestNamespace;

  beforeAll(async () => {
    namespace = await createTestNamespace('e2e-memcached');
    await apply(
      servedDeployment({
        name: 'memcached',
        namespace: namespace.name,
        labels,
        container: {
          name: 'memcached',
          image: operandImages.memcached,
          // Bare flags: the image's entrypoint runs memcached with them.
          args: ['-m', '32', '-p', '11211', '-U', '0'],
          ports: [{ name: 'memcache', containerPort: 11211 }],
          readinessProbe: { tcpSocket: { port: 'memcache' }, periodSeconds: 2 },
          securityContext: restrictedSecurityContext(memcacheUid),
          resources: { requests: { cpu: '10m', memory: '48Mi' }, limits: { memory: '96Mi' } },
        },
        ports: [{ name: 'memcache', port: 11211, targetPort: 'memcache' }],
      }),
    );
    await waitForDeployment(namespace.name, 'memcached');
  });

  afterAll(async () => {
    await namespace?.remove();
  });

  it('stores and returns a value through the Service, by its short and its fully qualified name', async () => {
    for (const host of ['memcached', `memcached.${namespace.name}.svc.cluster.local`]) {
      const session = await memcachedSetGet({
        namespace: namespace.name,
        host,
        image: operandImages.memcached,
      });
      expect(session.lines, `client pod (${session.phase}) talking to ${host}`).toEqual(session.expected);
      expect(session.phase).toBe('Succeeded');
    }
  });
});
