// Tears the local cluster down and puts the machine back as `up` found it: no process, mount,
// cgroup, interface, iptables rule or changed kernel setting is left. Works on a half-started
// or crashed cluster too, because it looks for leftovers rather than trusting a record of them.
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { daemonRunning, recordedDaemons, stopDaemon } from './daemons.ts';
import {
  clusterMounts,
  clusterProcesses,
  podCgroupPids,
  podCgroups,
  removeNewSharedHostEntries,
  removePodCgroups,
  unmountAll,
} from './host-leftovers.ts';
import { interfaceNames, readMachineBefore, removeBridge, restoreSysctls } from './host-network.ts';
import { egressGuardPresent, egressGuardTable, removeEgressGuard } from './egress-guard.ts';
import { removeClusterChains } from './iptables-chains.ts';
import { kubeRouterIpsets, removeKubeRouterIpsets } from './kube-router-ipsets.ts';
import { iptablesChanges, iptablesSnapshot } from './iptables-snapshot.ts';
import { network, runDir, stateDir } from './layout.ts';
import { note, step } from './progress.ts';
import { setTimeout as sleep } from 'node:timers/promises';

/** What is still on the machine after `down`; all lists empty means a clean teardown. */
export interface Leftovers {
  processes: string[];
  mounts: string[];
  cgroups: string[];
  interfaces: string[];
  iptablesAdded: string[];
  iptablesRemoved: string[];
  ipsets: string[];
  nftablesTables: string[];
  paths: string[];
}

/** Stops every component, removes everything the cluster made, and reports what is left. */
export async function clusterDown(): Promise<Leftovers> {
  const before = readMachineBefore();
  await step('stopping the node components', async () => {
    await Promise.all(
      // kube-router first among them: running, it would write back the chains removed below.
      ['kube-router', 'kube-proxy', 'kube-scheduler', 'kube-controller-manager', 'kubelet'].map((n) =>
        stopDaemon(n),
      ),
    );
  });
  await step('stopping the pods', async () => {
    // With the kubelet gone nothing restarts them; SIGKILL everything in the pod cgroups.
    for (let round = 0; round < 100; round++) {
      const pids = podCgroupPids();
      if (pids.length === 0) break;
      for (const pid of pids) signal(pid, 'SIGKILL');
      await sleep(100);
    }
  });
  await step('stopping containerd and the control plane', async () => {
    await stopDaemon('containerd');
    await stopDaemon('kube-apiserver');
    await stopDaemon('etcd');
    for (const name of recordedDaemons()) await stopDaemon(name);
    // Container shims and anything else that names our directories (e.g. after lost pid files).
    for (let round = 0; round < 50; round++) {
      const stray = clusterProcesses();
      if (stray.length === 0) break;
      for (const p of stray) signal(p.pid, 'SIGKILL');
      await sleep(100);
    }
  });
  let sharedPathsLeft: string[] = [];
  await step('removing mounts, network and cgroups', async () => {
    await unmountAll();
    await removeBridge(before);
    await removeClusterChains();
    await removeKubeRouterIpsets();
    await removeEgressGuard();
    removePodCgroups();
    if (before) {
      restoreSysctls(before);
      sharedPathsLeft = await removeNewSharedHostEntries(before.hostPaths);
    }
  });
  const leftovers = await findLeftovers(before);
  leftovers.paths.push(...sharedPathsLeft);
  await rm(stateDir, { recursive: true, force: true });
  await rm(runDir, { recursive: true, force: true });
  if (existsSync(stateDir) || existsSync(runDir)) leftovers.paths.push(stateDir, runDir);
  return leftovers;
}

async function findLeftovers(before: ReturnType<typeof readMachineBefore>): Promise<Leftovers> {
  // Without a record of the machine before `up`, every chain and rule counts as added, and only
  // the cluster's own are reported.
  const iptables = iptablesChanges(before?.iptables ?? [], await iptablesSnapshot());
  const interfacesNow = await interfaceNames();
  const leftovers: Leftovers = {
    processes: clusterProcesses().map((p) => `${p.pid} ${p.cmdline}`),
    mounts: clusterMounts(),
    cgroups: podCgroups(),
    interfaces: before
      ? interfacesNow.filter((i) => !before.interfaces.includes(i))
      : interfacesNow.filter((i) => i === network.bridge || i.startsWith('veth')),
    iptablesAdded: before ? iptables.added : iptables.added.filter((l) => /KUBE-|CNI-|HOMEOSTAT-/.test(l)),
    iptablesRemoved: iptables.removed,
    ipsets: await kubeRouterIpsets(),
    nftablesTables: (await egressGuardPresent()) ? [`ip ${egressGuardTable}`] : [],
    paths: [],
  };
  for (const name of ['etcd', 'kube-apiserver', 'containerd', 'kubelet', 'kube-proxy', 'kube-router']) {
    if (daemonRunning(name)) leftovers.processes.push(`${name} (pid file)`);
  }
  return leftovers;
}

/** Prints the leftovers report; returns true when nothing is left. */
export function reportLeftovers(leftovers: Leftovers): boolean {
  let clean = true;
  for (const [what, items] of Object.entries(leftovers)) {
    if (items.length === 0) continue;
    clean = false;
    note(`left behind (${what}):`);
    for (const item of items) note(`  ${item}`);
  }
  if (clean) {
    note(
      'nothing left behind: no cluster process, mount, cgroup, interface, iptables change, ipset or nftables table',
    );
  }
  return clean;
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // Already gone.
  }
}
