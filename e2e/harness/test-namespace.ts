// A namespace per suite, named so parallel runs and leftovers from a crashed run never collide,
// labelled with the Pod Security level the suite's workloads must satisfy.
import { randomBytes } from 'node:crypto';
import { apply, kubectl } from './cluster-access.ts';

export interface TestNamespace {
  name: string;
  /** Deletes the namespace and waits until it is gone. */
  remove(): Promise<void>;
}

/** Creates `<prefix>-<random>` enforcing the given Pod Security Standard (default: restricted). */
export async function createTestNamespace(
  prefix: string,
  podSecurity: 'restricted' | 'baseline' | 'privileged' = 'restricted',
): Promise<TestNamespace> {
  const name = `${prefix}-${randomBytes(3).toString('hex')}`;
  await apply([
    {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: {
        name,
        labels: {
          'app.kubernetes.io/part-of': 'homeostat-e2e',
          'pod-security.kubernetes.io/enforce': podSecurity,
          'pod-security.kubernetes.io/enforce-version': 'latest',
        },
      },
    },
  ]);
  return {
    name,
    remove: async () => {
      await kubectl(['delete', 'namespace', name, '--ignore-not-found', '--wait=true', '--timeout=180s']);
    },
  };
}
