// The kind node image, built on this machine from what the Go module proxy and Debian give
// (docs/adr/0503): the images kubeadm needs, made from the pinned binaries under their exact
// registry.k8s.io names; the node root (e2e/kind/node/Dockerfile); then those images imported
// into the node's containerd and the result committed as the node image. Every step is skipped
// when its inputs are unchanged (the component images through the image cache, the node image
// through a label carrying the hash of what went into it).
import { createHash } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { cacheDir, kubernetesVersion } from '@homeostat/testing';
import { localPathObjects } from '../cluster/local-path-addon.ts';
import { note, step } from '../cluster/progress.ts';
import { run, tryRun } from '../cluster/run-command.ts';
import { ensureImages, imageArchive, type ImageRecipe } from '../images/build-images.ts';
import { dockerCli } from '../images/docker-daemon.ts';
import { baseImages, clusterImages } from '../images/image-names.ts';
import { buildPause, builtComponent, imageRecipes } from '../images/image-recipes.ts';

/**
 * The node image kind runs here (kind's own are `kindest/node:<version>`). Each build is also
 * tagged `<version>-<inputs>`: the cluster's configuration names that tag, so a changed node
 * image makes a new cluster rather than reusing one of the old image.
 */
export const kindNodeImage = `ghcr.io/homeostat/kind-node:${kubernetesVersion}`;
const nodeRoot = `ghcr.io/homeostat/kind-node-root:${kubernetesVersion}`;
const inputsLabel = 'org.homeostat.inputs';
// The container the images are imported in before it is committed (Homeostat's kind prefix).
const buildContainer = 'homeostat-kind-node-build';
const fromKind = (dir: string) => join('..', 'kind', dir);

// What `kubeadm config images list --kubernetes-version <v>` prints for v1.37: the control plane
// at the Kubernetes version, and etcd, CoreDNS and pause at the versions kubeadm v1.37 pins (its
// constants DefaultEtcdVersion, CoreDNSVersion, PauseVersion; tools/kind/node pins the first two).
// kindNodeImage checks the list against the kubeadm it ships, so a new minor fails loudly here.
const controlPlane = ['kube-apiserver', 'kube-controller-manager', 'kube-scheduler'] as const;
const kubeadmImages: Record<
  (typeof controlPlane)[number] | 'kube-proxy' | 'etcd' | 'coredns' | 'pause',
  string
> = {
  'kube-apiserver': `registry.k8s.io/kube-apiserver:${kubernetesVersion}`,
  'kube-controller-manager': `registry.k8s.io/kube-controller-manager:${kubernetesVersion}`,
  'kube-scheduler': `registry.k8s.io/kube-scheduler:${kubernetesVersion}`,
  'kube-proxy': `registry.k8s.io/kube-proxy:${kubernetesVersion}`,
  etcd: 'registry.k8s.io/etcd:3.7.0-0',
  coredns: 'registry.k8s.io/coredns/coredns:v1.14.6',
  pause: 'registry.k8s.io/pause:3.10.2',
};

const staticImage = (ref: string, binary: string, component: string): ImageRecipe => ({
  ref,
  kind: 'dockerfile',
  dir: fromKind('component-images/static'),
  buildArgs: { BINARY: binary },
  extraFiles: async () => ({ [binary]: await builtComponent(component) }),
});

// The default StorageClass kind applies after `kubeadm init`: the local cluster's provisioner
// (e2e/cluster/local-path-addon.ts), its volumes on the node's /var (a volume of its own in kind).
const storageImage = clusterImages.localPathProvisioner;
async function defaultStorageManifest(): Promise<string> {
  const file = join(cacheDir(), 'kind', 'default-storage.yaml');
  await mkdir(dirname(file), { recursive: true });
  // JSON is YAML; kind passes the file to kubectl apply as it is.
  await writeFile(file, `${JSON.stringify(localPathObjects('/var/local-path-provisioner'), null, 2)}\n`);
  return file;
}
const recipeOf = (ref: string): ImageRecipe => {
  const recipe = imageRecipes.find((r) => r.ref === ref);
  if (!recipe) throw new Error(`no recipe builds ${ref}`);
  return recipe;
};

const recipes: readonly ImageRecipe[] = [
  { ref: baseImages.debian, kind: 'debian-rootfs' },
  recipeOf(storageImage),
  ...controlPlane.map((c) => staticImage(kubeadmImages[c], c, c)),
  staticImage(kubeadmImages.etcd, 'etcd', 'etcd@kind-node'),
  {
    ref: kubeadmImages.coredns,
    kind: 'dockerfile',
    dir: fromKind('component-images/coredns'),
    extraFiles: async () => ({ coredns: await builtComponent('coredns@kind-node') }),
  },
  {
    ref: kubeadmImages['kube-proxy'],
    kind: 'dockerfile',
    dir: fromKind('component-images/kube-proxy'),
    base: baseImages.debian,
    extraFiles: async () => ({ 'kube-proxy': await builtComponent('kube-proxy') }),
  },
  // The project's own pause program stands in for every pause version (it only holds namespaces).
  {
    ref: kubeadmImages.pause,
    kind: 'dockerfile',
    dir: 'pause',
    extraFiles: async () => ({ pause: await buildPause() }),
  },
  {
    ref: nodeRoot,
    kind: 'dockerfile',
    dir: fromKind('node'),
    base: baseImages.debian,
    buildArgs: { KUBERNETES_VERSION: kubernetesVersion },
    extraFiles: async () => ({
      'default-storage.yaml': await defaultStorageManifest(),
      ...Object.fromEntries(
        await Promise.all(
          [
            ['containerd', 'containerd'],
            ['containerd-shim-runc-v2', 'containerd-shim-runc-v2'],
            ['ctr', 'ctr'],
            ['kubeadm', 'kubeadm'],
            ['kubelet', 'kubelet'],
            ['kubectl', 'kubectl'],
            ...['host-local', 'loopback', 'ptp', 'portmap'].map((p) => [p, p]),
          ].map(async ([name, component]) => [name, await builtComponent(component ?? '')] as const),
        ),
      ),
    }),
  },
];

/** The images baked into the node (imported into its containerd). */
const bakedImages = [...Object.values(kubeadmImages), storageImage];

/** Builds what is stale and returns the node image's name (its build tag). The Docker daemon must answer. */
export async function ensureKindNodeImage(): Promise<string> {
  const ids = await step(`kind node image ${kubernetesVersion}: binaries and component images`, async () => {
    // Sequential on purpose: two Go builds at once only slow each other on a small machine.
    for (const component of ['kubeadm', 'kubelet', 'kubectl', ...controlPlane, 'kube-proxy']) {
      await builtComponent(component);
    }
    return ensureImages({ recipes, refs: [...bakedImages, nodeRoot], log: note });
  });
  await checkKubeadmImageList();
  const inputs = createHash('sha256')
    .update(JSON.stringify([nodeRoot, ...bakedImages].map((ref) => [ref, ids[ref]])))
    .digest('hex');
  const existing = await run(dockerCli, [
    'image',
    'ls',
    '-q',
    '--filter',
    `label=${inputsLabel}=${inputs}`,
    kindNodeImage,
  ]);
  const buildTag = `${kindNodeImage}-${inputs.slice(0, 12)}`;
  if (existing.trim()) return buildTag;
  await step(`kind node image ${kindNodeImage}: import the kubeadm images and commit`, () =>
    bakeNodeImage(inputs),
  );
  await run(dockerCli, ['tag', kindNodeImage, buildTag]);
  // Earlier builds' tags go; their layers with them once no container uses them.
  const tags = await run(dockerCli, [
    'image',
    'ls',
    '--format',
    '{{.Repository}}:{{.Tag}}',
    kindNodeImage.split(':')[0] ?? '',
  ]);
  for (const tag of tags.split('\n').filter((t) => t && t !== kindNodeImage && t !== buildTag)) {
    await tryRun(dockerCli, ['image', 'rm', tag]);
  }
  return buildTag;
}

// kubeadm's list comes from the kubeadm we ship: if a version bump changed it, say what to change.
async function checkKubeadmImageList(): Promise<void> {
  const listed = (
    await run(await builtComponent('kubeadm'), [
      'config',
      'images',
      'list',
      '--kubernetes-version',
      kubernetesVersion,
    ])
  )
    .trim()
    .split('\n')
    .sort();
  const ours = Object.values(kubeadmImages).sort();
  if (JSON.stringify(listed) !== JSON.stringify(ours))
    throw new Error(
      `kubeadm ${kubernetesVersion} needs ${listed.join(', ')} but the node image bakes ${ours.join(', ')}: ` +
        'update kubeadmImages in e2e/kind/node-image.ts and the versions in tools/kind/node',
    );
}

async function bakeNodeImage(inputs: string): Promise<void> {
  await tryRun(dockerCli, ['rm', '-f', buildContainer]);
  const archives = join(imageArchive(nodeRoot), '..');
  // Only the image content is imported (no unpacking: overlayfs cannot stack on the container's
  // own overlay root); containerd unpacks each image in the node when a container first uses it.
  await run(dockerCli, [
    'run',
    '--detach',
    '--name',
    buildContainer,
    '--privileged',
    '--volume',
    `${archives}:/archives:ro`,
    '--entrypoint',
    'sleep',
    nodeRoot,
    'infinity',
  ]);
  try {
    await run(dockerCli, [
      'exec',
      buildContainer,
      'sh',
      '-c',
      'containerd >/tmp/containerd.log 2>&1 & for i in $(seq 100); do ctr version >/dev/null 2>&1 && exit 0; sleep 0.2; done; cat /tmp/containerd.log; exit 1',
    ]);
    for (const ref of bakedImages) {
      const started = Date.now();
      const archive = `/archives/${imageArchive(ref).split('/').pop() ?? ''}`;
      await run(
        dockerCli,
        [
          'exec',
          buildContainer,
          'ctr',
          '-n',
          'k8s.io',
          'images',
          'import',
          '--no-unpack',
          '--digests',
          archive,
        ],
        { timeoutMs: 10 * 60_000 },
      );
      note(`${ref} imported into the node's containerd (${((Date.now() - started) / 1000).toFixed(1)} s)`);
    }
    await run(dockerCli, [
      'exec',
      buildContainer,
      'sh',
      '-c',
      // sleep, as PID 1, reaps nobody: a stopped containerd stays a zombie.
      'pkill containerd; while ps -o stat= -C containerd | grep -qv ^Z; do sleep 0.2; done; rm -rf /tmp/* /run/containerd',
    ]);
    await run(dockerCli, ['stop', '--time', '1', buildContainer]);
    await run(dockerCli, [
      'commit',
      '--change',
      'ENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]',
      '--change',
      'CMD []',
      '--change',
      `LABEL ${inputsLabel}=${inputs}`,
      buildContainer,
      kindNodeImage,
    ]);
  } finally {
    await tryRun(dockerCli, ['rm', '-f', buildContainer]);
  }
}
