// Runs against the cluster in KUBECONFIG (kind, the local cluster, any other): the memcached
// operand image as a plain Deployment + Service in a `restricted` namespace, and a client pod
// that stores and reads a value through the Service's DNS name. No operator is involved, so
// this proves the cluster itself: images, pod network (CNI), Services (kube-proxy) and DNS.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operandImages } from '../images/image-names.ts';
import { apply } from '../harness/cluster-access.ts';
import { createTestNamespace, type TestNamespace } from '../harness/test-namespace.ts';
import { restrictedSecurityContext, runClientPod, waitForDeployment } from '../harness/workloads.ts';

// The memcache user of the official image (and of our stand-in).
const memcacheUid = 11211;
const labels = { app: 'memcached' };

// One memcached text-protocol session over bash's /dev/tcp: store a value, read it back, and
// read a key nobody stored. Prints every reply line, so the test sees exactly what came back.
function clientScript(host: string, key: string, value: string): string {
  return [
    'set -eu',
    `exec 3<>/dev/tcp/${host}/11211`,
    `printf 'set ${key} 0 0 ${value.length}\\r\\n${value}\\r\\n' >&3`,
    'IFS= read -r -t 10 reply <&3; echo "set: ${reply%$\'\\r\'}"',
    `printf 'get ${key}\\r\\n' >&3`,
    'for i in 1 2 3; do IFS= read -r -t 10 reply <&3; echo "get: ${reply%$\'\\r\'}"; done',
    `printf 'get ${key}-never-set\\r\\n' >&3`,
    'IFS= read -r -t 10 reply <&3; echo "miss: ${reply%$\'\\r\'}"',
    "printf 'quit\\r\\n' >&3",
  ].join('\n');
}

describe('memcached image on the cluster in KUBECONFIG', () => {
  let namespace: TestNamespace;

  beforeAll(async () => {
    namespace = await createTestNamespace('e2e-memcached');
    await apply([
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'memcached', namespace: namespace.name, labels },
        spec: {
          replicas: 1,
          selector: { matchLabels: labels },
          template: {
            metadata: { labels },
            spec: {
              containers: [
                {
                  name: 'memcached',
                  image: operandImages.memcached,
                  imagePullPolicy: 'IfNotPresent',
                  // Bare flags: the image's entrypoint runs memcached with them.
                  args: ['-m', '32', '-p', '11211', '-U', '0'],
                  ports: [{ name: 'memcache', containerPort: 11211 }],
                  readinessProbe: { tcpSocket: { port: 'memcache' }, periodSeconds: 2 },
                  securityContext: restrictedSecurityContext(memcacheUid),
                  resources: { requests: { cpu: '10m', memory: '48Mi' }, limits: { memory: '96Mi' } },
                },
              ],
            },
          },
        },
      },
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'memcached', namespace: namespace.name, labels },
        spec: { selector: labels, ports: [{ name: 'memcache', port: 11211, targetPort: 'memcache' }] },
      },
    ]);
    await waitForDeployment(namespace.name, 'memcached');
  });

  afterAll(async () => {
    await namespace?.remove();
  });

  it('stores and returns a value through the Service, by its short and its fully qualified name', async () => {
    for (const host of ['memcached', `memcached.${namespace.name}.svc.cluster.local`]) {
      const key = `e2e-${randomBytes(4).toString('hex')}`;
      const value = randomBytes(8).toString('hex');
      const result = await runClientPod({
        namespace: namespace.name,
        name: `client-${randomBytes(3).toString('hex')}`,
        image: operandImages.memcached,
        command: ['bash', '-c', clientScript(host, key, value)],
        runAsUser: memcacheUid,
      });
      expect(result.logs.trim().split('\n'), `client pod (${result.phase}) talking to ${host}`).toEqual([
        'set: STORED',
        `get: VALUE ${key} 0 ${value.length}`,
        `get: ${value}`,
        'get: END',
        'miss: END',
      ]);
      expect(result.phase).toBe('Succeeded');
    }
  });
});
