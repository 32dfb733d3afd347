// Brings up a single-node Kubernetes on this machine from host processes, or reuses the one
// already running when it is healthy. See docs/adr/0500-local-cluster-from-host-processes.md.
import { Resolver } from 'node:dns/promises';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import {
  binaryPath,
  createControlPlanePki,
  kubernetesVersion,
  logTail,
  repoRoot,
  toolVersion,
  waitUntil,
  writeAdminKubeconfig,
} from '@homeostat/testing';
import { clusterImages } from '../images/image-names.ts';
import { ensureImages } from '../images/build-images.ts';
import { writeComponentConfig } from './component-config.ts';
import { components, type Component } from './components.ts';
import { coreDnsObjects } from './coredns-addon.ts';
import { defaultStorageClass, localPathObjects } from './local-path-addon.ts';
import { daemonDied, daemonRunning, logFile, startDaemon } from './daemons.ts';
import { clusterDown, reportLeftovers } from './cluster-down.ts';
import { recordMachineBefore, setUpBridge } from './host-network.ts';
import { ensureEgressGuard } from './egress-guard.ts';
import { apiServerUrl, network, paths, ports, runDir, stateDir } from './layout.ts';
import { note, step } from './progress.ts';
import { requireHostPackages } from './host-packages.ts';
import { run } from './run-command.ts';

const neededBinaries = [
  'etcd',
  'kube-apiserver',
  'kube-controller-manager',
  'kube-scheduler',
  'kubelet',
  'kube-proxy',
  'kubectl',
  'containerd',
  'containerd-shim-runc-v2',
  'ctr',
  'coredns',
  'local-path-provisioner',
  'kube-router',
];

/** The order components start in; each waits for the ones before it. */
const startOrder = [
  ['etcd', 'containerd'],
  ['kube-apiserver'],
  ['kube-controller-manager', 'kube-scheduler', 'kubelet', 'kube-proxy'],
];

export interface LocalCluster {
  kubeconfig: string;
  /** True when a healthy cluster was already running and has been reused. */
  reused: boolean;
}

/** Starts the local cluster (or reuses a healthy one) and returns its kubeconfig. */
export async function clusterUp(): Promise<LocalCluster> {
  if (process.getuid?.() !== 0) throw new Error('the local cluster needs root (network, mounts, cgroups)');
  await step('host packages (runc, CNI plugins, iptables, nftables, ipset, conntrack, iproute2)', () =>
    requireHostPackages('cluster'),
  );
  await step(`building the Kubernetes ${kubernetesVersion} binaries and containerd not cached yet`, () =>
    run('bash', [join(repoRoot, 'tools/build-binaries.sh'), ...neededBinaries], { timeoutMs: 120 * 60_000 }),
  );
  if (existsSync(paths.ready)) {
    const problem = await healthProblem();
    if (problem === undefined) {
      note(`reusing the healthy local cluster (KUBECONFIG=${paths.kubeconfig})`);
      // Applied again (a no-op when unchanged) so that a change to an add-on reaches a reused cluster.
      await applyAddons();
      return { kubeconfig: paths.kubeconfig, reused: true };
    }
    note(`the cluster that was up is unhealthy (${problem}); rebuilding it`);
  }
  if (existsSync(stateDir) || existsSync(runDir)) {
    await step('clearing the remains of an earlier cluster', async () => {
      reportLeftovers(await clusterDown());
    });
  }
  await checkPortsFree();
  await mkdir(stateDir, { recursive: true, mode: 0o700 });
  await mkdir(paths.pki, { recursive: true });
  await recordMachineBefore();

  const pki = await step('certificates and kubeconfig', async () => {
    const made = await createControlPlanePki(paths.pki, network.kubernetesServiceIp, [
      `IP:${network.nodeIp}`,
      `DNS:${network.nodeName}`,
    ]);
    await writeAdminKubeconfig(paths.kubeconfig, apiServerUrl, made);
    await writeComponentConfig(paths.kubeconfig, made.caCert);
    return made;
  });
  await step(`pod network: bridge ${network.bridge} (${network.nodeIp}), egress guard`, async () => {
    await setUpBridge();
    await ensureEgressGuard();
  });

  const all = components(pki, paths.kubeconfig);
  for (const group of startOrder) {
    await step(`starting ${group.join(', ')}`, () =>
      Promise.all(group.map((name) => startAndWait(name, all))),
    );
    if (group.includes('containerd')) {
      // The sandbox, DNS and provisioner images must be in containerd before the kubelet runs a pod.
      await step('images the cluster runs (pause, CoreDNS, local-path-provisioner)', () =>
        ensureImages({
          refs: [clusterImages.pause, clusterImages.coredns, clusterImages.localPathProvisioner],
          containerd: {
            socket: paths.containerdSocket,
            importedRecord: join(stateDir, 'imported-images.json'),
          },
          log: note,
        }),
      );
    }
  }
  await step(`node ${network.nodeName} Ready`, waitForNodeReady);
  // kube-router finds its node by name at start and exits when the kubelet has not registered it.
  await step('starting kube-router (NetworkPolicies)', () => startAndWait('kube-router', all));
  await applyAddons();
  const ready: ReadyRecord = { version: kubernetesVersion, containerd: toolVersion('containerd') };
  await writeFile(paths.ready, JSON.stringify({ ...ready, at: new Date().toISOString() }));
  return { kubeconfig: paths.kubeconfig, reused: false };
}

/** The cluster's add-ons: DNS and the default StorageClass, each applied and waited for. */
async function applyAddons(): Promise<void> {
  await step('cluster DNS (CoreDNS)', async () => {
    await kubectl(
      ['apply', '--server-side', '--force-conflicts', '-f', '-'],
      JSON.stringify(coreDnsObjects()),
    );
    await waitForDns();
  });
  await step(`default StorageClass ${defaultStorageClass} (local-path-provisioner)`, async () => {
    await kubectl(
      ['apply', '--server-side', '--force-conflicts', '-f', '-'],
      JSON.stringify(localPathObjects()),
    );
    await kubectl([
      '-n',
      'local-path-storage',
      'rollout',
      'status',
      'deployment/local-path-provisioner',
      '--timeout=180s',
    ]);
  });
}

async function startAndWait(name: string, all: Record<string, Component>): Promise<void> {
  const component = all[name];
  if (!component) throw new Error(`no component named ${name}`);
  await startDaemon(component.spec);
  await waitUntil(name, component.ready, {
    timeoutMs: 120_000,
    intervalMs: 250,
    abort: daemonDied(name),
    describe: () => logTail(logFile(name)),
  });
}

/** Runs the pinned kubectl against the local cluster. */
export function kubectl(args: readonly string[], input?: string): Promise<string> {
  return run(binaryPath('kubectl'), [`--kubeconfig=${paths.kubeconfig}`, ...args], {
    timeoutMs: 120_000,
    ...(input !== undefined ? { input } : {}),
  });
}

async function nodeReady(): Promise<boolean> {
  const out = await kubectl([
    'get',
    'node',
    network.nodeName,
    '-o',
    'jsonpath={.status.conditions[?(@.type=="Ready")].status}',
  ]);
  return out.trim() === 'True';
}

async function waitForNodeReady(): Promise<void> {
  await waitUntil('node Ready', nodeReady, {
    timeoutMs: 180_000,
    intervalMs: 1000,
    abort: Promise.race(['kubelet', 'containerd'].map((n) => daemonDied(n))),
    describe: () => logTail(logFile('kubelet')),
  });
}

/** Asks the cluster DNS, from this machine, for the API server's Service name. */
async function dnsAnswers(): Promise<boolean> {
  const resolver = new Resolver({ timeout: 1000, tries: 1 });
  resolver.setServers([network.dnsServiceIp]);
  const addresses = await resolver.resolve4(`kubernetes.default.svc.${network.clusterDomain}`);
  return addresses.includes(network.kubernetesServiceIp);
}

async function waitForDns(): Promise<void> {
  await waitUntil('kubernetes.default.svc resolves through CoreDNS', dnsAnswers, {
    timeoutMs: 180_000,
    intervalMs: 1000,
    describe: () =>
      `see: kubectl --kubeconfig=${paths.kubeconfig} -n kube-system describe pods -l k8s-app=kube-dns`,
  });
}

/** What `up` writes last: the versions the cluster runs. */
interface ReadyRecord {
  version: string;
  containerd: string;
}

/** Why the running cluster cannot be reused, or undefined when it can. */
async function healthProblem(): Promise<string | undefined> {
  // A cluster of other versions (an older pin, or HOMEOSTAT_KUBERNETES_VERSION changed) is rebuilt.
  const running = JSON.parse(await readFile(paths.ready, 'utf8')) as Partial<ReadyRecord>;
  const wanted: ReadyRecord = { version: kubernetesVersion, containerd: toolVersion('containerd') };
  if (running.version !== wanted.version || running.containerd !== wanted.containerd) {
    return (
      `it runs Kubernetes ${running.version ?? '?'} with containerd ${running.containerd ?? '?'}, ` +
      `not ${wanted.version} with ${wanted.containerd}`
    );
  }
  for (const name of [
    'etcd',
    'containerd',
    'kube-apiserver',
    'kube-controller-manager',
    'kube-scheduler',
    'kubelet',
    'kube-proxy',
    'kube-router',
  ]) {
    if (!daemonRunning(name)) return `${name} is not running`;
  }
  try {
    if (!(await nodeReady())) return 'the node is not Ready';
    if (!(await dnsAnswers())) return 'cluster DNS does not answer';
    // Clusters brought up before the provisioner joined lack it; rebuilding adds it.
    await kubectl(['get', 'storageclass', defaultStorageClass, '-o', 'name']).catch(() => {
      throw new Error(`no default StorageClass ${defaultStorageClass}`);
    });
  } catch (error) {
    return String(error).split('\n')[0];
  }
  await ensureEgressGuard();
  return undefined;
}

async function checkPortsFree(): Promise<void> {
  const checks: [string, string, number][] = [
    ['etcd', '127.0.0.1', ports.etcdClient],
    ['etcd peer', '127.0.0.1', ports.etcdPeer],
    ['kube-controller-manager', '127.0.0.1', ports.controllerManager],
    ['kube-scheduler', '127.0.0.1', ports.scheduler],
    ['kubelet healthz', '127.0.0.1', ports.kubeletHealthz],
    ['kube-proxy healthz', '127.0.0.1', ports.kubeProxyHealthz],
    ['kube-proxy metrics', '127.0.0.1', ports.kubeProxyMetrics],
    ['kube-router healthz', '127.0.0.1', ports.kubeRouterHealthz],
  ];
  for (const [what, host, port] of checks) {
    if (await listening(host, port)) {
      throw new Error(
        `port ${host}:${port}, which the local cluster's ${what} needs, is taken by another process`,
      );
    }
  }
}

function listening(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
