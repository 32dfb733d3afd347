// A pod's processes as the node sees them, for failures no Kubernetes API can cause: a SIGKILL
// to a container's main process, and a network cut inside the pod's own network namespace.
// Works where the suite runs on the node itself (the local cluster); elsewhere `podProcesses`
// finds nothing and the suite says so.
import { readdir, readFile } from 'node:fs/promises';
import { run } from '../cluster/run-command.ts';

export interface NodeProcess {
  pid: number;
  ppid: number;
  comm: string;
}

/** The node's processes in the pod with this uid (cgroupfs or systemd cgroup driver). */
export async function podProcesses(podUid: string): Promise<NodeProcess[]> {
  const marks = [`pod${podUid}`, `pod${podUid.replaceAll('-', '_')}`];
  const found: NodeProcess[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^[0-9]+$/.test(entry)) continue;
    try {
      const cgroup = await readFile(`/proc/${entry}/cgroup`, 'utf8');
      if (!marks.some((mark) => cgroup.includes(mark))) continue;
      const stat = await readFile(`/proc/${entry}/stat`, 'utf8');
      // comm is in parentheses and may hold spaces; the fields after it are space-separated.
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      found.push({ pid: Number(entry), ppid, comm });
    } catch {
      // The process ended while being read.
    }
  }
  return found;
}

/** The postmaster of a PostgreSQL pod: the postgres process whose parent is not postgres. */
export async function postmasterOf(podUid: string): Promise<NodeProcess | undefined> {
  const processes = await podProcesses(podUid);
  const byPid = new Map(processes.map((p) => [p.pid, p]));
  return processes.find((p) => p.comm === 'postgres' && byPid.get(p.ppid)?.comm !== 'postgres');
}

/** Runs a command inside the network namespace of process `pid` (and nowhere else). */
function inNetworkNamespaceOf(pid: number, command: readonly string[]): Promise<string> {
  return run('nsenter', ['-t', String(pid), '-n', '--', ...command], { timeoutMs: 30_000 });
}

/** The pod's sandbox process (pause): its network namespace is the pod's, for the pod's whole life. */
async function sandboxOf(podUid: string): Promise<NodeProcess | undefined> {
  return (await podProcesses(podUid)).find((p) => p.comm === 'pause');
}

/**
 * Drops every packet in and out of the pod except loopback, inside the pod's network namespace
 * only. Returns the undo; undoing for a pod that is gone (its namespace with it) is a no-op.
 */
export async function cutPodNetwork(podUid: string): Promise<() => Promise<void>> {
  const sandbox = await sandboxOf(podUid);
  if (!sandbox)
    throw new Error(`no sandbox process of pod ${podUid} on this node (is the suite running on the node?)`);
  const rules = [
    ['INPUT', '!', '-i', 'lo', '-j', 'DROP'],
    ['OUTPUT', '!', '-o', 'lo', '-j', 'DROP'],
  ];
  for (const rule of rules) await inNetworkNamespaceOf(sandbox.pid, ['iptables', '-w', '-I', ...rule]);
  return async () => {
    const still = await sandboxOf(podUid);
    if (!still) return;
    for (const rule of rules)
      await inNetworkNamespaceOf(still.pid, ['iptables', '-w', '-D', ...rule]).catch(() => '');
  };
}
