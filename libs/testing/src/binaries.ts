import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
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

const minorNumber = (minor: string) => Number(minor.split('.')[1]);

/**
 * The pinned Kubernetes releases, oldest first, e.g. ["v1.35.4", "v1.37.2"]: one wrapper module
 * per minor under tools/kubernetes/<minor>/ (the same rule as tools/build-binaries.sh).
 */
export const pinnedKubernetesVersions: readonly string[] = readdirSync(join(repoRoot, 'tools', 'kubernetes'))
  .filter(
    (entry) => /^1\.\d+$/.test(entry) && existsSync(join(repoRoot, 'tools', 'kubernetes', entry, 'go.mod')),
  )
  .sort((a, b) => minorNumber(a) - minorNumber(b))
  .map((minor) => pinnedVersion(join('kubernetes', minor), 'k8s.io/kubernetes'));

/**
 * The pinned release a minor choice names: "newest" (or nothing), "oldest", or a minor like "1.35".
 * Throws, listing the pinned ones, for a minor that is not pinned.
 */
export function pinnedKubernetesVersion(choice: string | undefined): string {
  const oldest = pinnedKubernetesVersions[0];
  const newest = pinnedKubernetesVersions[pinnedKubernetesVersions.length - 1];
  if (!oldest || !newest) throw new Error('no Kubernetes wrapper module under tools/kubernetes/<minor>/');
  if (choice === undefined || choice === '' || choice === 'newest') return newest;
  if (choice === 'oldest') return oldest;
  const found = pinnedKubernetesVersions.find((v) => v.startsWith(`v${choice}.`));
  if (!found) {
    throw new Error(
      `Kubernetes ${choice} is not pinned (pinned: ${pinnedKubernetesVersions.join(', ')}; ` +
        'tools/kubernetes/pin.sh pins another)',
    );
  }
  return found;
}

/**
 * The Kubernetes release this process runs, e.g. "v1.37.2": the newest pinned one, or the one
 * HOMEOSTAT_KUBERNETES_VERSION names ("oldest", "newest", "1.35"). Every Kubernetes binary
 * `binaryPath` returns is of this release.
 */
export const kubernetesVersion = pinnedKubernetesVersion(process.env['HOMEOSTAT_KUBERNETES_VERSION']);
/** The etcd release the project pins, e.g. "v3.6.16" (read from tools/etcd/go.mod). */
export const etcdVersion = pinnedVersion('etcd', 'go.etcd.io/etcd/server/v3');

/**
 * Every etcd release the project pins, oldest first: tools/etcd (the default, `etcdVersion`) and
 * the wrapper of each other minor beside it, tools/etcd/v<minor> (`build-binaries.sh etcd@<minor>`).
 */
export const pinnedEtcdVersions: readonly string[] = [
  etcdVersion,
  ...readdirSync(join(repoRoot, 'tools', 'etcd'))
    .filter(
      (entry) => /^v\d+\.\d+$/.test(entry) && existsSync(join(repoRoot, 'tools', 'etcd', entry, 'go.mod')),
    )
    .map((entry) => pinnedVersion(join('etcd', entry), 'go.etcd.io/etcd/server/v3')),
].sort((a, b) => minorNumber(a.slice(1)) - minorNumber(b.slice(1)));

export type KubernetesComponent =
  | 'kube-apiserver'
  | 'kube-controller-manager'
  | 'kube-scheduler'
  | 'kubelet'
  | 'kube-proxy'
  | 'kubectl'
  | 'kubeadm';
export type EtcdComponent = 'etcd' | 'etcdctl' | 'etcdutl';
/** Go-built tools the end-to-end suites and the local cluster use, each cached under its own version. */
export type ToolComponent =
  | 'containerd'
  | 'containerd-shim-runc-v2'
  | 'ctr'
  | 'coredns'
  | 'local-path-provisioner'
  | 'kube-router'
  | 'helm'
  | 'kubeconform'
  | 'promtool'
  | 'kind'
  | 'versitygw';

// Which wrapper module under tools/ pins each tool, the module path it pins, and the cache folder
// it is built into (tools sharing a module share a folder).
const toolModules: Record<ToolComponent, [wrapper: string, modulePath: string, folder?: string]> = {
  containerd: ['containerd', 'github.com/containerd/containerd/v2'],
  'containerd-shim-runc-v2': ['containerd', 'github.com/containerd/containerd/v2', 'containerd'],
  ctr: ['containerd', 'github.com/containerd/containerd/v2', 'containerd'],
  coredns: ['coredns', 'github.com/coredns/coredns'],
  'local-path-provisioner': ['local-path-provisioner', 'github.com/rancher/local-path-provisioner'],
  'kube-router': ['kube-router', 'github.com/cloudnativelabs/kube-router/v2'],
  helm: ['helm', 'helm.sh/helm/v3'],
  kubeconform: ['helm', 'github.com/yannh/kubeconform'],
  promtool: ['prometheus', 'github.com/prometheus/prometheus', 'prometheus'],
  kind: ['kind', 'sigs.k8s.io/kind'],
  versitygw: ['versitygw', 'github.com/versity/versitygw'],
};

/** The pinned version of a Go-built tool, e.g. "v1.15.0" for coredns (read from its tools/ go.mod). */
export function toolVersion(component: ToolComponent): string {
  const [wrapper, modulePath] = toolModules[component];
  return pinnedVersion(wrapper, modulePath);
}

function binaryFolder(component: KubernetesComponent | EtcdComponent | ToolComponent): string {
  if (component in toolModules) {
    const tool = component as ToolComponent;
    return `${toolModules[tool][2] ?? tool}-${toolVersion(tool)}`;
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
        `Run \`bash tools/build-binaries.sh ${component}\` (with the same HOMEOSTAT_KUBERNETES_VERSION) ` +
        'or `npm test`, which builds it.',
    );
  }
  return path;
}

/**
 * Absolute path of etcd, etcdctl or etcdutl of a pinned etcd release ("v3.7.3"; the default one
 * when none is given); throws with the command that builds it if absent.
 */
export function etcdBinaryPath(component: EtcdComponent, version: string = etcdVersion): string {
  if (!pinnedEtcdVersions.includes(version)) {
    throw new Error(`etcd ${version} is not pinned (pinned: ${pinnedEtcdVersions.join(', ')})`);
  }
  const path = join(cacheDir(), 'bin', `etcd-${version}`, component);
  if (!existsSync(path)) {
    const minor = version.slice(1).split('.').slice(0, 2).join('.');
    const suffix = version === etcdVersion ? '' : `@${minor}`;
    throw new Error(
      `${component} ${version} is not built yet (expected ${path}). Run \`bash tools/build-binaries.sh ${component}${suffix}\`.`,
    );
  }
  return path;
}

/** The binaries tools/build-binaries.sh keys by their own sources, whose place only it computes. */
export type SourceKeyedComponent = 'olm-validate' | 'bench-widget-operator' | 'memcached-exporter';

/**
 * Absolute path of a source-keyed binary as the current sources build it; throws with the command
 * that builds it if absent (an edit since the last build changes the path).
 */
export function sourceKeyedBinaryPath(component: SourceKeyedComponent): string {
  const path = execFileSync('bash', [join(repoRoot, 'tools/build-binaries.sh'), '--path', component], {
    encoding: 'utf8',
  }).trim();
  if (!existsSync(path)) {
    throw new Error(`${component} is not built (${path}); run: bash tools/build-binaries.sh ${component}`);
  }
  return path;
}
