// A kind cluster of one control plane and N workers for the e2e suites (docs/adr/0503). Offline
// (`nodeImage: 'built'`), the node image is built here and the cluster runs on a Docker daemon of
// its own (socket, storage and state under Homeostat's names), so that no image build stopping
// the shared daemon takes the nodes with it; with internet (`nodeImage: 'kind'`, e2e/kind/up.sh),
// kind's own node image on the user's Docker. Everything else is the same: the configuration
// (kind-config.ts), the images loaded into the nodes, the readiness wait.
import { spawn } from 'node:child_process';
import { createReadStream, existsSync } from 'node:fs';
import { copyFile, mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cacheDir, waitUntil } from '@homeostat/testing';
import { requireHostPackages } from '../cluster/host-packages.ts';
import { note, seconds, step } from '../cluster/progress.ts';
import { run, tryRun } from '../cluster/run-command.ts';
import { ensureImages, imageArchive } from '../images/build-images.ts';
import { ensureDockerDaemon, stopDockerDaemon, type DockerDaemonPlace } from '../images/docker-daemon.ts';
import { operatorImages, workloadImages } from '../images/image-names.ts';
import { builtComponent, repositoryRoot } from '../images/image-recipes.ts';
import { nodesPerImage, type KindNodeTaints } from './images-per-node.ts';
import { kindClusterName, kindConfig, kindNetwork } from './kind-config.ts';
import { ensureKindNodeImage } from './node-image.ts';
import { removeServiceRoute, routeServicesVia } from './service-route.ts';

const here = dirname(fileURLToPath(import.meta.url));

/** Where the node image comes from: built on this machine, or kind's default (pulled). */
export type KindNodeImageSource = 'built' | 'kind';

export interface KindClusterOptions {
  workers: number;
  nodeImage: KindNodeImageSource;
}

export interface KindCluster {
  name: string;
  kubeconfig: string;
  /** DOCKER_HOST of the daemon running the nodes (for `docker stop <node>` in suites). */
  dockerHost: string | undefined;
}

// The runtime wrapper the daemon runs containers with, copied out of the repository so the
// long-lived daemon does not depend on the worktree that started it.
const runtimeWrapper = join(cacheDir(), 'kind', 'bin', 'runc-within-bounding-set');

/** The offline cluster's Docker daemon: its own socket and storage, kept running with the cluster. */
export const kindDockerPlace: DockerDaemonPlace = {
  host: 'unix:///run/homeostat-kind/docker.sock',
  dataRoot: join(cacheDir(), 'kind', 'docker'),
  execRoot: '/run/homeostat-kind/exec',
  pidFile: '/run/homeostat-kind/dockerd.pid',
  logFile: join(cacheDir(), 'kind', 'dockerd.log'),
  // kind runs nodes --privileged; these hosts withhold a capability Docker would ask for.
  extraArgs: [`--add-runtime=homeostat-runc=${runtimeWrapper}`, '--default-runtime=homeostat-runc'],
};

const loadedRecord = () => join(cacheDir(), 'kind', `${kindClusterName}.loaded.json`);

export const kindKubeconfig = (): string => join(cacheDir(), 'kind', `${kindClusterName}.kubeconfig`);

/** Brings the cluster up (or reuses one of the same shape and image) with the suites' images loaded. */
export async function kindClusterUp(options: KindClusterOptions): Promise<KindCluster> {
  if (options.nodeImage === 'built') {
    await requireHostPackages('kind');
    await mkdir(dirname(runtimeWrapper), { recursive: true });
    await copyFile(join(here, 'runc-within-bounding-set'), runtimeWrapper);
    await ensureDockerDaemon(note, { place: kindDockerPlace, keepRunning: true });
    process.env['DOCKER_HOST'] = kindDockerPlace.host;
  }
  const dockerHost = process.env['DOCKER_HOST'];
  // kind names its network "kind" unless told otherwise; ours carries Homeostat's prefix.
  process.env['KIND_EXPERIMENTAL_DOCKER_NETWORK'] = kindNetwork;
  const kind = await builtComponent('kind');
  const image = options.nodeImage === 'built' ? await ensureKindNodeImage() : undefined;
  const kubeconfig = kindKubeconfig();
  const config = kindConfig({ workers: options.workers, ...(image ? { image } : {}) });
  const configFile = join(cacheDir(), 'kind', `${kindClusterName}.json`);
  await mkdir(join(cacheDir(), 'kind'), { recursive: true });

  const current = await existingShape(kind);
  if (current && current !== JSON.stringify(config)) {
    await step(`kind: deleting ${kindClusterName} (another shape or node image)`, () =>
      run(kind, ['delete', 'cluster', '--name', kindClusterName]),
    );
  }
  const create = async () => {
    await writeFile(configFile, JSON.stringify(config, null, 2));
    await rm(loadedRecord(), { force: true });
    await step(`kind: creating ${kindClusterName} (1 control plane, ${options.workers} workers)`, () =>
      run(
        kind,
        [
          'create',
          'cluster',
          '--name',
          kindClusterName,
          '--config',
          configFile,
          '--kubeconfig',
          kubeconfig,
          '--retain',
        ],
        { timeoutMs: 15 * 60_000 },
      ),
    );
    await step('kind: every node Ready, CoreDNS available', () =>
      waitForNodes(kubeconfig, options.workers + 1, 5 * 60_000),
    );
  };
  if (current !== JSON.stringify(config)) {
    await create();
  } else {
    await run(kind, ['export', 'kubeconfig', '--name', kindClusterName, '--kubeconfig', kubeconfig]);
    // A cluster left by an earlier session may have had its nodes killed with the session and
    // started again by the daemon: such nodes may never be Ready again (kind clusters do not
    // survive an unclean restart). Reuse only what is Ready soon; otherwise build it anew.
    const ready = await step('kind: the existing cluster Ready (reused)', () =>
      waitForNodes(kubeconfig, options.workers + 1, reusedReadyMs),
    ).then(
      () => true,
      (error: unknown) => {
        note(`the existing ${kindClusterName} is not Ready (${String(error).slice(0, 200)}): deleting it`);
        return false;
      },
    );
    if (!ready) {
      await run(kind, ['delete', 'cluster', '--name', kindClusterName]);
      await create();
    }
  }
  if (options.nodeImage === 'built') {
    await step('kind: cluster DNS answering for the cluster only (no upstream to forward to here)', () =>
      dnsWithoutUpstream(kubeconfig),
    );
  }
  await step('kind: a route from this machine to the Services, via the control plane', async () => {
    try {
      await routeServicesVia(await controlPlaneIp());
    } catch (error) {
      // Offline we run as root on Linux; a user's machine may not let us (not root, Docker Desktop).
      if (options.nodeImage === 'built') throw error;
      note(
        `no route to the Services (${error instanceof Error ? error.message : String(error)}): the PostgreSQL suites connect to a ClusterIP from here and will fail`,
      );
    }
  });
  await step('kind: images for the suites (built where stale, loaded into the nodes that run them)', () =>
    loadSuiteImages(kind, kubeconfig, options.nodeImage),
  );
  return { name: kindClusterName, kubeconfig, dockerHost };
}

/**
 * Deletes the cluster (its containers and network, and the route to its Services) and, on the
 * offline path, stops its Docker daemon; the daemon's storage (the node image) stays in the cache
 * for the next run.
 */
export async function kindClusterDown(): Promise<{ mountsLeft: string[] }> {
  const ownDaemon = !process.env['DOCKER_HOST'];
  if (ownDaemon) process.env['DOCKER_HOST'] = kindDockerPlace.host;
  await removeServiceRoute();
  // A session that ended (or was killed) while the cluster ran took its daemon with it, but not the
  // nodes' containers in the daemon's storage: start the daemon again to delete them.
  if (ownDaemon && !(await tryRun('docker', ['info'])).ok && existsSync(kindDockerPlace.dataRoot)) {
    await ensureDockerDaemon(note, { place: kindDockerPlace, keepRunning: true });
  }
  if ((await tryRun('docker', ['info'])).ok) {
    const kind = await builtComponent('kind');
    await run(kind, ['delete', 'cluster', '--name', kindClusterName]);
    await tryRun('docker', ['network', 'rm', kindNetwork]);
  }
  // A daemon killed with its session leaves its mounts too: released whether or not one ran.
  return { mountsLeft: ownDaemon ? await stopDockerDaemon(kindDockerPlace) : [] };
}

// The configuration a running cluster was made with (a label kind does not set: we keep it in a
// file next to the kubeconfig), or undefined when there is no cluster.
async function existingShape(kind: string): Promise<string | undefined> {
  const clusters = (await tryRun(kind, ['get', 'clusters'])).stdout.split('\n');
  if (!clusters.includes(kindClusterName)) return undefined;
  const saved = await tryRun('cat', [join(cacheDir(), 'kind', `${kindClusterName}.json`)]);
  if (!saved.ok) return 'unknown';
  // Stopped nodes (a suite that failed before starting them again) make a cluster to rebuild.
  const stopped = await tryRun('docker', [
    'ps',
    '--all',
    '--filter',
    `label=io.x-k8s.kind.cluster=${kindClusterName}`,
    '--filter',
    'status=exited',
    '--quiet',
  ]);
  if (stopped.stdout.trim()) return 'stopped nodes';
  return JSON.stringify(JSON.parse(saved.stdout));
}

/**
 * kubeadm's CoreDNS forwards every name outside the cluster domain to the node's resolver, which
 * has nowhere to go on a machine without a network: each such query waits for the forwarder's
 * timeout. glibc asks for a name outside the cluster (the short name itself, after the search
 * domains) whenever a search domain answers "no such record of this type", so an IPv6 lookup of
 * `kubernetes.default.svc` took 4 s, and a PostgreSQL primary whose fence check gives DNS one
 * second stopped itself. Offline, CoreDNS forwards nowhere (as on the local cluster): a name
 * outside the cluster is refused at once.
 */
async function dnsWithoutUpstream(kubeconfig: string): Promise<void> {
  const kubectl = await builtComponent('kubectl');
  const k = (args: string[], input?: string) =>
    run(
      kubectl,
      ['--kubeconfig', kubeconfig, '-n', 'kube-system', ...args],
      input === undefined ? {} : { input },
    );
  const corefile = await k(['get', 'configmap', 'coredns', '-o', 'jsonpath={.data.Corefile}']);
  const offline = corefile.replace(/^\s*forward \. \/etc\/resolv\.conf(\s*\{[^}]*\})?\s*$/m, '');
  if (offline === corefile) return;
  const patch = JSON.stringify({ data: { Corefile: offline } });
  await k(['patch', 'configmap', 'coredns', '--type=merge', '-p', patch]);
  // Without waiting for CoreDNS's reload to notice the file changed.
  await k(['rollout', 'restart', 'deployment/coredns']);
  await k(['rollout', 'status', 'deployment/coredns', '--timeout=300s']);
}

/** The control plane's address on the nodes' Docker network. */
async function controlPlaneIp(): Promise<string> {
  const ip = (
    await run('docker', [
      'inspect',
      '--format',
      `{{(index .NetworkSettings.Networks "${kindNetwork}").IPAddress}}`,
      `${kindClusterName}-control-plane`,
    ])
  ).trim();
  if (!ip) throw new Error(`${kindClusterName}-control-plane has no address on the network ${kindNetwork}`);
  return ip;
}

/** How long a cluster found already running may take to report every node Ready before it is rebuilt. */
const reusedReadyMs = 90_000;

async function waitForNodes(kubeconfig: string, count: number, timeoutMs: number): Promise<void> {
  const kubectl = await builtComponent('kubectl');
  await waitUntil(
    `${count} Ready nodes`,
    async () => {
      const out = await tryRun(kubectl, [
        '--kubeconfig',
        kubeconfig,
        'get',
        'nodes',
        '-o',
        'jsonpath={range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\\n"}{end}',
      ]);
      return out.ok && out.stdout.split('\n').filter((s) => s === 'True').length === count;
    },
    { timeoutMs, intervalMs: 2000 },
  );
  await run(kubectl, [
    '--kubeconfig',
    kubeconfig,
    '-n',
    'kube-system',
    'rollout',
    'status',
    'deployment/coredns',
    `--timeout=${Math.round(timeoutMs / 1000)}s`,
  ]);
}

// The same images the local cluster imports, built offline by `npm run images`' recipes and loaded
// from their archives. With internet the nodes pull the operands themselves, and only the operator
// images are built (from operators/Dockerfile, FROM the official Node image) and loaded.
async function loadSuiteImages(kind: string, kubeconfig: string, source: KindNodeImageSource): Promise<void> {
  if (source === 'kind') {
    for (const [operator, ref] of Object.entries(operatorImages)) {
      await run(
        'docker',
        ['build', '-t', ref, '-f', 'operators/Dockerfile', '--build-arg', `OPERATOR=${operator}`, '.'],
        {
          cwd: repositoryRoot,
          timeoutMs: 30 * 60_000,
        },
      );
      await run(kind, ['load', 'docker-image', ref, '--name', kindClusterName], { timeoutMs: 10 * 60_000 });
    }
    return;
  }
  const refs = workloadImages();
  const ids = await ensureImages({ refs, log: note });
  const saved = (await tryRun('cat', [loadedRecord()])).stdout;
  const loaded: Record<string, string> = saved ? (JSON.parse(saved) as Record<string, string>) : {};
  const nodesFor = nodesPerImage(await nodeTaints(kubeconfig), refs);
  const loadingStarted = Date.now();
  for (const ref of refs) {
    if (loaded[ref] === ids[ref]) continue;
    const started = Date.now();
    const nodes = nodesFor.get(ref) ?? [];
    if (nodes.length === 0)
      throw new Error(`no node of ${kindClusterName} can run ${ref}: every one is tainted`);
    // Content only, as the node image's own images (`kind load` would unpack every image on every
    // node, most of which never run it): containerd unpacks an image where a pod first uses it.
    await Promise.all(nodes.map((node) => importIntoNode(node, imageArchive(ref))));
    loaded[ref] = ids[ref] ?? '';
    await writeFile(loadedRecord(), JSON.stringify(loaded, null, 2));
    note(`${ref} loaded into ${nodes.join(', ')} (${seconds(started)} s)`);
  }
  note(`images loaded in ${seconds(loadingStarted)} s`);
}

/** Each node's name (kind names its node containers the same) and whether a taint keeps pods off it. */
async function nodeTaints(kubeconfig: string): Promise<KindNodeTaints[]> {
  const kubectl = await builtComponent('kubectl');
  const list = JSON.parse(await run(kubectl, ['--kubeconfig', kubeconfig, 'get', 'nodes', '-o', 'json'])) as {
    items: { metadata: { name: string }; spec?: { taints?: { effect: string }[] } }[];
  };
  return list.items.map((node) => ({
    name: node.metadata.name,
    tainted: (node.spec?.taints ?? []).some((t) => t.effect === 'NoSchedule' || t.effect === 'NoExecute'),
  }));
}

/** Streams an image archive into a node's containerd (`ctr import` in the node, reading stdin). */
function importIntoNode(node: string, archive: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      'docker',
      ['exec', '-i', node, 'ctr', '--namespace=k8s.io', 'images', 'import', '--no-unpack', '--digests', '-'],
      { stdio: ['pipe', 'ignore', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    createReadStream(archive).on('error', reject).pipe(child.stdin);
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0
        ? resolve()
        : reject(new Error(`importing ${archive} into ${node} failed (${code}): ${stderr.trim()}`)),
    );
  });
}
