import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root, found from this file's place in it. */
export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

/** Where tools/build-binaries.sh caches what it builds (same rule as tools/cache-dir.sh). */
export function cacheDir(): string {
  return (
    process.env['HOMEOSTAT_CACHE_DIR'] ??
    join(process.env['XDG_CACHE_HOME'] ?? join(homedir(), '.cache'), 'homeostat')
  );
}

function pinnedVersion(wrapper: string, modulePath: string): string {
  const goMod = readFileSync(join(repoRoot, 'tools', wrapper, 'go.mod'), 'utf8');
  const escaped = modulePath.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  const match = new RegExp(`^\\s*(?:require\\s+)?${escaped}\\s+(v\\S+)`, 'm').exec(goMod);
  if (!match?.[1]) throw new Error(`tools/${wrapper}/go.mod does not pin ${modulePath}`);
  return match[1];
}

/** The Kubernetes release the project pins, e.g. "v1.34.4" (read from tools/kubernetes/go.mod). */
export const kubernetesVersion = pinnedVersion('kubernetes', 'k8s.io/kubernetes');
/** The etcd release the project pins, e.g. "v3.6.16" (read from tools/etcd/go.mod). */
export const etcdVersion = pinnedVersion('etcd', 'go.etcd.io/etcd/server/v3');

export type KubernetesComponent =
  'kube-apiserver' | 'kube-controller-manager' | 'kube-scheduler' | 'kubelet' | 'kube-proxy' | 'kubectl';
export type EtcdComponent = 'etcd' | 'etcdctl' | 'etcdutl';
/** Go-built tools the end-to-end suites and the local cluster use, each cached under its own version. */
export type ToolComponent = 'coredns' | 'helm' | 'kubeconform' | 'kind';

// Which wrapper module under tools/ pins each tool, and the module path it pins.
const toolModules: Record<ToolComponent, [wrapper: string, modulePath: string]> = {
  coredns: ['coredns', 'github.com/coredns/coredns'],
  helm: ['helm', 'helm.sh/helm/v3'],
  kubeconform: ['helm', 'github.com/yannh/kubeconform'],
  kind: ['kind', 'sigs.k8s.io/kind'],
};

/** The pinned version of a Go-built tool, e.g. "v1.15.0" for coredns (read from its tools/ go.mod). */
export function toolVersion(component: ToolComponent): string {
  const [wrapper, modulePath] = toolModules[component];
  return pinnedVersion(wrapper, modulePath);
}

function binaryFolder(component: KubernetesComponent | EtcdComponent | ToolComponent): string {
  if (component in toolModules) {
    const tool = component as ToolComponent;
    return `${tool}-${toolVersion(tool)}`;
  }
  return component.startsWith('etcd') ? `etcd-${etcdVersion}` : `kubernetes-${kubernetesVersion}`;
}

/** Absolute path of a pinned, Go-built binary; throws with the command that builds it if absent. */
export function binaryPath(component: KubernetesComponent | EtcdComponent | ToolComponent): string {
  const folder = binaryFolder(component);
  const path = join(cacheDir(), 'bin', folder, component);
  if (!existsSync(path)) {
    throw new Error(
      `${component} is not built yet (expected ${path}). ` +
        `Run \`bash tools/build-binaries.sh ${component}\` or \`npm test\`, which builds it.`,
    );
  }
  return path;
}
