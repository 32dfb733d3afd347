// How each image in images.json is made: which folder holds its Dockerfile, what it builds FROM,
// and which files built outside the repository (Go binaries, Node.js) go into its context.
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { binaryPath, cacheDir, etcdBinaryPath, etcdVersion, type EtcdComponent } from '@homeostat/testing';
import { run } from '../cluster/run-command.ts';
import {
  baseImages,
  clusterImages,
  monitoringImages,
  operandImages,
  operatorImages,
  suiteImages,
} from './image-names.ts';
import type { DebianSuite } from './debian-rootfs.ts';

const imagesDir = dirname(fileURLToPath(import.meta.url));
const repoRoot = join(imagesDir, '..', '..');

export interface ImageRecipe {
  /** The reference it is tagged with (from images.json). */
  ref: string;
  /**
   * `dockerfile`: built from `dir`; `repo-dockerfile`: built from `dockerfile` with the repository
   * root as the context; `debian-rootfs`: imported from the debootstrap tarball.
   */
  kind: 'dockerfile' | 'repo-dockerfile' | 'debian-rootfs';
  /** Folder (under e2e/images) with the Dockerfile and the files it copies. */
  dir?: string;
  /** `repo-dockerfile`: the Dockerfile, relative to the repository root. */
  dockerfile?: string;
  /**
   * `repo-dockerfile`: the repository paths the Dockerfile copies. Their files (as git sees them,
   * untracked included, ignored excluded) are the image's inputs: a change elsewhere rebuilds nothing.
   */
  sources?: readonly string[];
  /** The image this one builds FROM, when that is one of ours (it is built first). */
  base?: string;
  /** Build arguments. */
  buildArgs?: Record<string, string>;
  /** `debian-rootfs`: the suite (default bookworm). */
  suite?: DebianSuite;
  /** Files built elsewhere to add to the context: context name → absolute path (made on demand). */
  extraFiles?: () => Promise<Record<string, string>>;
}

const nodeVersion = '24.21.0';
// The npm the toolchain itself runs (Debian machines of this kind ship 11.19).
const npmVersion = '11.19.1';

/** Every image the project builds, bases before the images built FROM them. */
export const imageRecipes: readonly ImageRecipe[] = [
  { ref: baseImages.debian, kind: 'debian-rootfs' },
  { ref: baseImages.debianTrixie, kind: 'debian-rootfs', suite: 'trixie' },
  { ref: baseImages.debianForky, kind: 'debian-rootfs', suite: 'forky' },
  {
    ref: clusterImages.pause,
    kind: 'dockerfile',
    dir: 'pause',
    extraFiles: async () => ({ pause: await buildPause() }),
  },
  {
    ref: clusterImages.coredns,
    kind: 'dockerfile',
    dir: 'coredns',
    extraFiles: async () => ({ coredns: await builtBinary('coredns') }),
  },
  {
    ref: clusterImages.localPathProvisioner,
    kind: 'dockerfile',
    dir: 'local-path-provisioner',
    base: baseImages.debian,
    extraFiles: async () => ({ 'local-path-provisioner': await builtBinary('local-path-provisioner') }),
  },
  { ref: operandImages.memcached, kind: 'dockerfile', dir: 'memcached', base: baseImages.debianForky },
  // The Memcached pods' metrics sidecar, built from operators/memcached/exporter (ADR 0402).
  goBinaryRecipe(operandImages.memcachedExporter, 'memcached-exporter'),
  // One image per pinned etcd minor: the operator's rolling upgrades go from one to the next.
  etcdRecipe(operandImages.etcd),
  etcdRecipe(operandImages.etcd37),
  // Debian's PostgreSQL of each supported major version, with the operator's instance entrypoint.
  postgresRecipe(operandImages.postgres17, baseImages.debianTrixie, '17'),
  postgresRecipe(operandImages.postgres18, baseImages.debianForky, '18'),
  // The S3-compatible server the etcd suite backs up to (the binary the backup tests run on loopback).
  {
    ref: suiteImages.s3,
    kind: 'dockerfile',
    dir: 'versitygw',
    base: baseImages.debian,
    extraFiles: async () => ({ versitygw: await builtBinary('versitygw') }),
  },
  // The monitoring addon (ADR 0016): each a static binary from the Go module proxy on an empty image.
  goBinaryRecipe(monitoringImages.prometheus, 'prometheus'),
  goBinaryRecipe(monitoringImages.prometheusOperator, 'prometheus-operator'),
  goBinaryRecipe(monitoringImages.prometheusConfigReloader, 'prometheus-config-reloader'),
  {
    ref: baseImages.node,
    kind: 'dockerfile',
    dir: 'node',
    base: baseImages.debian,
    buildArgs: { NODE_VERSION: nodeVersion },
    extraFiles: async () => ({
      node: join(cacheDir(), 'node', `v${nodeVersion}`, 'bin', 'node'),
      'npm.tgz': await fetchNpm(),
    }),
  },
  ...Object.entries(operatorImages).map(([operator, ref]) => operatorRecipe(operator, ref)),
];

// etcd, etcdctl and etcdutl of the release the image's tag names (tools/etcd or tools/etcd/v<minor>).
function etcdRecipe(ref: string): ImageRecipe {
  const version = ref.slice(ref.lastIndexOf(':') + 1);
  const minor = version.slice(1).split('.').slice(0, 2).join('.');
  const built = async (component: EtcdComponent) => {
    const suffix = version === etcdVersion ? '' : `@${minor}`;
    await run('bash', [join(repoRoot, 'tools', 'build-binaries.sh'), `${component}${suffix}`], {
      timeoutMs: 60 * 60_000,
    });
    return etcdBinaryPath(component, version);
  };
  return {
    ref,
    kind: 'dockerfile',
    dir: 'etcd',
    base: baseImages.debian,
    extraFiles: async () => ({
      etcd: await built('etcd'),
      etcdctl: await built('etcdctl'),
      etcdutl: await built('etcdutl'),
    }),
  };
}

// An image of one binary tools/build-binaries.sh builds: its folder and the binary share the name.
function goBinaryRecipe(ref: string, component: string): ImageRecipe {
  return {
    ref,
    kind: 'dockerfile',
    dir: component,
    extraFiles: async () => ({ [component]: await builtComponent(component) }),
  };
}

function postgresRecipe(ref: string, base: string, major: string): ImageRecipe {
  return {
    ref,
    kind: 'repo-dockerfile',
    dockerfile: 'e2e/images/postgres/Dockerfile',
    base,
    buildArgs: { DEBIAN_IMAGE: base, PG_MAJOR: major },
    sources: ['e2e/images/postgres', 'operators/postgres/entrypoint'],
  };
}

// Every operator image comes from the one operators/Dockerfile, told which workspace to bundle.
function operatorRecipe(operator: string, ref: string): ImageRecipe {
  return {
    ref,
    kind: 'repo-dockerfile',
    dockerfile: 'operators/Dockerfile',
    base: baseImages.node,
    buildArgs: { OPERATOR: operator },
    sources: [
      '.dockerignore',
      'package.json',
      'package-lock.json',
      'tsconfig.base.json',
      'libs/testing/package.json',
      'libs/reconcile',
      'libs/operator-kit',
      `operators/${operator}`,
    ],
  };
}

/** Absolute path of a recipe's folder. */
export function recipeDir(recipe: ImageRecipe): string {
  return join(imagesDir, recipe.dir ?? '.');
}

/** The repository root: the build context of `repo-dockerfile` recipes. */
export const repositoryRoot = repoRoot;

// The npm the Node stand-in carries: the registry's own package, packed once into the cache.
// The official node image bundles npm; the operators' build stages need it for `npm ci`.
async function fetchNpm(): Promise<string> {
  const dir = join(cacheDir(), 'images', `npm-${npmVersion}`);
  const tarball = join(dir, `npm-${npmVersion}.tgz`);
  if (existsSync(tarball)) return tarball;
  await mkdir(dir, { recursive: true });
  await run('npm', ['pack', `npm@${npmVersion}`, '--silent', '--pack-destination', dir]);
  return tarball;
}

// A binary from the version-keyed cache, built from the Go module proxy first when missing.
async function builtBinary(name: Parameters<typeof binaryPath>[0]): Promise<string> {
  await run('bash', [join(repoRoot, 'tools', 'build-binaries.sh'), name], { timeoutMs: 60 * 60_000 });
  return binaryPath(name);
}

/**
 * A binary from the version-keyed cache by its tools/build-binaries.sh name (`kubeadm`,
 * `etcd@kind-node`, `ptp`, …), built from the Go module proxy first when missing.
 */
export async function builtComponent(component: string): Promise<string> {
  const script = join(repoRoot, 'tools', 'build-binaries.sh');
  await run('bash', [script, component], { timeoutMs: 60 * 60_000 });
  return (await run('bash', [script, '--path', component])).trim();
}

/** A static Go binary, so the pause image needs nothing but itself. */
export async function buildPause(): Promise<string> {
  const out = join(cacheDir(), 'images', 'pause-bin', 'pause');
  await mkdir(dirname(out), { recursive: true });
  await run('go', ['build', '-trimpath', '-ldflags=-s -w', '-o', out, '.'], {
    cwd: join(imagesDir, 'pause'),
    env: { ...process.env, CGO_ENABLED: '0', GOFLAGS: '-mod=mod -buildvcs=false' },
  });
  return out;
}
