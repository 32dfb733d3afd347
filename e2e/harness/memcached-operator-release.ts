// The Memcached operator installed from its chart, as a user installs it, into a suite's namespace
// and watching only that namespace (another Memcached operator in the cluster keeps its own objects).
import { join } from 'node:path';
import { repoRoot } from '@homeostat/testing';
import { getObject, kubectl } from './cluster-access.ts';
import { helm } from './helm.ts';

export const memcachedCrdName = 'memcacheds.cache.homeostat.dev';
const chartDir = join(repoRoot, 'charts', 'memcached-operator');

export interface MemcachedOperatorRelease {
  release: string;
  namespace: string;
  /** helm uninstall (waits until its objects are gone). */
  uninstall(): Promise<void>;
  /** Uninstalls if still installed, and deletes the CRD if this release brought it. */
  cleanup(): Promise<void>;
}

/** `helm install` into `namespace`, waiting until the operator is Ready; `values` are `--set` pairs. */
export async function installMemcachedOperator(
  namespace: string,
  values: Record<string, string | number> = {},
): Promise<MemcachedOperatorRelease> {
  const release = 'memcached-operator';
  // The CRD has helm.sh/resource-policy: keep, so a cluster may hold it from an earlier install;
  // then this release leaves it alone, and cleanup removes only a CRD this release installed.
  const crdInstalledHere = (await getObject('customresourcedefinition', memcachedCrdName)) === undefined;
  await helm([
    'install',
    release,
    chartDir,
    '--namespace',
    namespace,
    '--wait',
    '--timeout',
    '180s',
    '--set-json',
    `watchNamespaces=${JSON.stringify([namespace])}`,
    '--set',
    `crds.enabled=${crdInstalledHere}`,
    ...Object.entries(values).flatMap(([key, value]) => ['--set', `${key}=${value}`]),
  ]);
  let installed = true;
  const uninstall = async () => {
    await helm(['uninstall', release, '--namespace', namespace, '--wait', '--timeout', '120s']);
    installed = false;
  };
  return {
    release,
    namespace,
    uninstall,
    cleanup: async () => {
      if (installed) await uninstall().catch(() => undefined);
      if (crdInstalledHere)
        await kubectl(['delete', 'crd', memcachedCrdName, '--ignore-not-found', '--wait=true']);
    },
  };
}
