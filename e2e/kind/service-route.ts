// A route from this machine to the kind cluster's Services: the suites' own clients (the
// PostgreSQL write load, say) connect to a Service's ClusterIP from where the suite runs, as they
// do on the local cluster, whose node is this machine. The Service range is routed to the control
// plane's node on the nodes' Docker network; its kube-proxy forwards to the Service's pods on any
// node and masquerades the traffic (it comes from outside the pod range), so replies come back the
// same way. The control plane's node is the one no suite stops.
import { run, tryRun } from '../cluster/run-command.ts';
import { kindServiceSubnet } from './kind-config.ts';

/** Routes the Service range via `controlPlaneIp` (replacing any route of ours from an earlier cluster). */
export async function routeServicesVia(controlPlaneIp: string): Promise<void> {
  await run('ip', ['route', 'replace', kindServiceSubnet, 'via', controlPlaneIp]);
}

/** Removes the route, if there is one. */
export async function removeServiceRoute(): Promise<void> {
  await tryRun('ip', ['route', 'del', kindServiceSubnet]);
}
