// The ipsets kube-router's policy controller keeps (one per policy's sources and destinations,
// and the temporary ones of a restore in progress). They outlive kube-router and can only be
// destroyed once no iptables rule refers to them, so `down` removes them after the chains.
import { run, tryRun } from './run-command.ts';

// Its IPv6 sets carry an `inet6:` prefix; the names after it are the same.
const kubeRouterSet = /^(inet6:)?(KUBE-SRC-|KUBE-DST-|TMP-)/;

/** The kube-router ipsets on the machine (none when the ipset tool is absent). */
export async function kubeRouterIpsets(): Promise<string[]> {
  const listed = await tryRun('ipset', ['list', '-name']);
  if (!listed.ok) return [];
  return listed.stdout.split('\n').filter((name) => kubeRouterSet.test(name));
}

/** Destroys kube-router's ipsets (after removeClusterChains: a set in use cannot go). */
export async function removeKubeRouterIpsets(): Promise<void> {
  for (const name of await kubeRouterIpsets()) await run('ipset', ['destroy', name]);
}
