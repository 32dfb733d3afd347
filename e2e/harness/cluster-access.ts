// The e2e suites' only way into the cluster: the kubeconfig in KUBECONFIG (kind, the local
// cluster, or any other) and the pinned kubectl. Nothing here knows which cluster it is.
import { existsSync } from 'node:fs';
import { binaryPath } from '@homeostat/testing';
import { run } from '../cluster/run-command.ts';

/** The kubeconfig the suites run against; fails with what to do when none is given. */
export function kubeconfigPath(): string {
  const path = process.env['KUBECONFIG'];
  if (!path) {
    throw new Error(
      'KUBECONFIG is not set: run the suites through `npm run e2e`, or export KUBECONFIG for your cluster',
    );
  }
  // It may list several files, as kubectl allows; each must exist.
  const missing = path.split(':').filter((file) => file && !existsSync(file));
  if (missing.length) throw new Error(`KUBECONFIG names ${missing.join(', ')}, which does not exist`);
  return path;
}

/** Runs kubectl against the cluster under test and returns stdout; errors carry kubectl's stderr. */
export function kubectl(args: readonly string[], input?: string): Promise<string> {
  return run(binaryPath('kubectl'), [`--kubeconfig=${kubeconfigPath()}`, ...args], {
    timeoutMs: 300_000,
    ...(input !== undefined ? { input } : {}),
  });
}

/** Applies Kubernetes objects (server-side, so re-applying converges instead of failing). */
export async function apply(objects: readonly object[]): Promise<void> {
  await kubectl(
    ['apply', '--server-side', '--field-manager=homeostat-e2e', '-f', '-'],
    JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }),
  );
}

/** Reads one object as JSON; undefined when it does not exist. `resource` is what kubectl takes (`deployment`, `memcached`, …). */
export async function getObject<T = Record<string, unknown>>(
  resource: string,
  name: string,
  namespace?: string,
): Promise<T | undefined> {
  const out = await kubectl([
    ...(namespace ? ['-n', namespace] : []),
    'get',
    resource,
    name,
    '--ignore-not-found',
    '-o',
    'json',
  ]);
  return out.trim() ? (JSON.parse(out) as T) : undefined;
}

/** Lists objects of a resource in a namespace, optionally by label selector. */
export async function listObjects<T = Record<string, unknown>>(
  resource: string,
  namespace: string,
  selector?: string,
): Promise<T[]> {
  const out = await kubectl([
    '-n',
    namespace,
    'get',
    resource,
    ...(selector ? ['-l', selector] : []),
    '-o',
    'json',
  ]);
  return (JSON.parse(out) as { items: T[] }).items;
}
