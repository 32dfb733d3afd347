// A pod's processes as its node sees them, for failures no Kubernetes API can cause: a SIGKILL to
// a container's main process, and a network cut inside the pod's own network namespace. Every
// command runs on the pod's node: on the local cluster the node is this machine; on a kind
// cluster it is the node's container, reached with `docker exec` (kind-nodes.ts), so the same
// suite works whether or not the node's processes are visible from where it runs.
import type { V1Pod } from '@kubernetes/client-node';
import { run } from '../cluster/run-command.ts';
import { onNode } from './kind-nodes.ts';

export interface NodeProcess {
  /** As the node numbers it (its own PID namespace on kind). */
  pid: number;
  ppid: number;
  comm: string;
}

/** Where a pod runs: the node, and the uid its cgroups are named after. */
export interface PodOnNode {
  uid: string;
  node: string;
}

/** The uid and node of a pod object; fails for a pod not scheduled yet. */
export function podOnNode(pod: V1Pod): PodOnNode {
  const uid = pod.metadata?.uid;
  const node = pod.spec?.nodeName;
  if (!uid || !node) throw new Error(`pod ${pod.metadata?.name ?? '?'} has no uid or is not on a node yet`);
  return { uid, node };
}

function runOnNode(node: string, command: readonly string[]): Promise<string> {
  const [program = '', ...args] = onNode(node, command);
  return run(program, args, { timeoutMs: 30_000 });
}

// Lists "pid ppid comm" for processes whose cgroup names the pod (cgroupfs writes the uid as is,
// the systemd driver with underscores; both given as arguments). comm is in parentheses in
// /proc/<pid>/stat and may hold spaces; the fields after it are space-separated. A process ending
// while read is skipped.
const listScript = `a="$1"; b="$2"
for d in /proc/[0-9]*; do
  grep -qe "pod$a" -e "pod$b" "$d/cgroup" 2>/dev/null || continue
  s="$(cat "$d/stat" 2>/dev/null)" || continue
  comm="\${s#*(}"; comm="\${comm%)*}"
  set -- \${s##*) }
  echo "\${d#/proc/} $2 $comm"
done`;

/** The node's processes in the pod. */
export async function podProcesses(pod: PodOnNode): Promise<NodeProcess[]> {
  const out = await runOnNode(pod.node, [
    'sh',
    '-c',
    listScript,
    'sh',
    pod.uid,
    pod.uid.replaceAll('-', '_'),
  ]);
  return out
    .split('\n')
    .map((line) => line.trim().split(' '))
    .filter((fields) => fields.length >= 3)
    .map(([pid, ppid, ...comm]) => ({ pid: Number(pid), ppid: Number(ppid), comm: comm.join(' ') }));
}

/** The first process of the pod named `comm` (its container's main process, for etcd). */
export async function processNamed(pod: PodOnNode, comm: string): Promise<NodeProcess | undefined> {
  return (await podProcesses(pod)).find((p) => p.comm === comm);
}

/** The postmaster of a PostgreSQL pod: the postgres process whose parent is not postgres. */
export async function postmasterOf(pod: PodOnNode): Promise<NodeProcess | undefined> {
  const processes = await podProcesses(pod);
  const byPid = new Map(processes.map((p) => [p.pid, p]));
  return processes.find((p) => p.comm === 'postgres' && byPid.get(p.ppid)?.comm !== 'postgres');
}

/** Sends SIGKILL to a process of the pod, on its node. */
export async function killOnNode(pod: PodOnNode, process: NodeProcess): Promise<void> {
  await runOnNode(pod.node, ['kill', '-KILL', String(process.pid)]);
}

/** Runs a command inside the network namespace of process `pid` on the node (and nowhere else). */
function inNetworkNamespaceOf(node: string, pid: number, command: readonly string[]): Promise<string> {
  return runOnNode(node, ['nsenter', '-t', String(pid), '-n', '--', ...command]);
}

/** The pod's sandbox process (pause): its network namespace is the pod's, for the pod's whole life. */
async function sandboxOf(pod: PodOnNode): Promise<NodeProcess | undefined> {
  return (await podProcesses(pod)).find((p) => p.comm === 'pause');
}

/**
 * Drops every packet in and out of the pod except loopback, inside the pod's network namespace
 * only; with `outgoingTcpPorts`, only the connections the pod opens to those ports (the pod cut off
 * from one kind of peer, everything else intact). Returns the undo; undoing for a pod that is gone
 * (its namespace with it) is a no-op.
 */
export async function cutPodNetwork(
  pod: PodOnNode,
  options: { outgoingTcpPorts?: readonly number[] } = {},
): Promise<() => Promise<void>> {
  const sandbox = await sandboxOf(pod);
  if (!sandbox) throw new Error(`no sandbox process of pod ${pod.uid} on node ${pod.node}`);
  const rules = options.outgoingTcpPorts
    ? options.outgoingTcpPorts.map((port) => ['OUTPUT', '-p', 'tcp', '--dport', String(port), '-j', 'DROP'])
    : [
        ['INPUT', '!', '-i', 'lo', '-j', 'DROP'],
        ['OUTPUT', '!', '-o', 'lo', '-j', 'DROP'],
      ];
  for (const rule of rules)
    await inNetworkNamespaceOf(pod.node, sandbox.pid, ['iptables', '-w', '-I', ...rule]);
  return async () => {
    const still = await sandboxOf(pod).catch(() => undefined);
    if (!still) return;
    for (const rule of rules)
      await inNetworkNamespaceOf(pod.node, still.pid, ['iptables', '-w', '-D', ...rule]).catch(() => '');
  };
}
