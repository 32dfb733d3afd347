// `kubectl homeostat fence|unfence CLUSTER INSTANCE...|--all`: asks the PostgreSQL operator to
// fence instances (PostgreSQL stopped in a pod that stays, with its data; no Service routes to it,
// no failover goes to it) or to let them start again, through the cluster's fencedInstances
// annotation; then waits until the pods show it.
import { findResource } from '../find-resource.ts';
import {
  fenceChange,
  fencedInstancesAnnotation,
  fencedPodAnnotation,
  fencePatch,
  type FenceRequest,
} from '../fence-request.ts';
import { kindNamed, UsageError } from '../kinds.ts';
import { getJson, patchAsRead, type KubectlTarget } from '../kubectl.ts';
import { isGoing, isReady, podName, podSelector, type Pod } from '../pods.ts';
import { byInstanceName, instancesOf, type PostgresCluster } from '../postgres-instances.ts';
import { conditionsOf, type Resource } from '../status-view.ts';
import { waitFor } from '../wait.ts';

const postgresCluster = kindNamed('pgc');

/** Whether the operator made this pod as a fenced instance's. */
export function isFencedPod(pod: Pod): boolean {
  return pod.metadata?.annotations?.[fencedPodAnnotation] === 'true';
}

/** For each instance, its pod, or undefined when it has none (yet). */
function podsOf(instances: readonly string[], pods: readonly Pod[]): [string, Pod | undefined][] {
  return instances.map((instance) => [instance, pods.find((p) => podName(p) === instance)]);
}

function because(reasons: [string, readonly string[]][]): true | string {
  const why = reasons
    .filter(([, names]) => names.length > 0)
    .map(([what, names]) => `${what}: ${names.join(', ')}`);
  return why.length === 0 ? true : why.join('; ');
}

/** true once each instance's pod is made fenced, is not going away and is not Ready; else why not. */
export function fenceProgress(instances: readonly string[], pods: readonly Pod[]): true | string {
  const found = podsOf(instances, pods);
  const where = (test: (pod: Pod) => boolean) =>
    found.filter(([, pod]) => pod !== undefined && test(pod)).map(([instance]) => instance);
  return because([
    ['no pod', found.filter(([, pod]) => pod === undefined).map(([instance]) => instance)],
    ['not fenced yet', where((p) => !isFencedPod(p))],
    ['being replaced', where(isGoing)],
    ['still Ready', where(isReady)],
  ]);
}

/** true once each instance's pod is made unfenced, is not going away and is Ready, and the cluster is Available; else why not. */
export function unfenceProgress(
  instances: readonly string[],
  cluster: Resource | undefined,
  pods: readonly Pod[],
): true | string {
  const found = podsOf(instances, pods);
  const where = (test: (pod: Pod) => boolean) =>
    found.filter(([, pod]) => pod !== undefined && test(pod)).map(([instance]) => instance);
  const available = conditionsOf(cluster?.status ?? {}).find((c) => c.type === 'Available');
  const progress = because([
    ['no pod', found.filter(([, pod]) => pod === undefined).map(([instance]) => instance)],
    ['still fenced', where(isFencedPod)],
    ['being replaced', where(isGoing)],
    ['not Ready', where((p) => !isReady(p))],
  ]);
  if (available?.status === 'True') return progress;
  const unavailable = `Available ${available?.status ?? 'unknown'}`;
  return progress === true ? unavailable : `${progress}; ${unavailable}`;
}

export interface FenceArguments {
  cluster: string | undefined;
  instances: readonly string[];
  all: boolean;
}

export async function fence(
  target: KubectlTarget,
  action: FenceRequest['action'],
  given: FenceArguments,
  wait: { timeoutMs: number } | undefined,
): Promise<string[]> {
  const usage = `${action} takes CLUSTER INSTANCE... or CLUSTER --all`;
  const namedSome = given.instances.length > 0;
  // Instances or --all, never both: which one was meant cannot be guessed.
  if (!given.cluster || !postgresCluster || given.all === namedSome) throw new UsageError(usage);
  const request: FenceRequest = { action, instances: given.all ? 'all' : given.instances };
  const { kind, resource } = await findResource<PostgresCluster>(target, given.cluster, [postgresCluster]);
  const name = resource.metadata?.name ?? given.cluster;
  const changeOf = (cluster: PostgresCluster) =>
    fenceChange(
      name,
      cluster.metadata?.annotations?.[fencedInstancesAnnotation],
      request,
      instancesOf(name, cluster),
    );
  const { read } = await patchAsRead<PostgresCluster>(target, kind.resource, name, (cluster) => {
    const change = changeOf(cluster);
    return change.changed ? fencePatch(change.value) : undefined;
  });
  // The same object the written patch was computed from, so the same change.
  const change = changeOf(read);
  const instances =
    request.instances === 'all'
      ? instancesOf(name, read)
      : [...new Set(request.instances)].sort(byInstanceName);
  const asked = request.instances === 'all' ? 'every instance' : instances.join(', ');
  const lines = [
    change.changed
      ? `${name}: ${action === 'fence' ? 'fencing' : 'unfencing'} ${asked} requested (${fencedInstancesAnnotation}${change.value === null ? ' removed' : `=${change.value}`})`
      : `${name}: ${asked} already ${action}d as asked (${fencedInstancesAnnotation} unchanged)`,
  ];
  if (change.spelledOut)
    lines.push(
      `${name}: "*" (every instance) became the list of the others, which stay fenced; an instance added later starts unfenced`,
    );
  if (!wait) return lines;
  const selector = podSelector(postgresCluster, name);
  const pods = async () => (await getJson<{ items: Pod[] }>(target, ['pods', '-l', selector]))?.items ?? [];
  if (action === 'fence') {
    await waitFor(`${asked} of ${name} fenced`, wait.timeoutMs, async () =>
      fenceProgress(instances, await pods()),
    );
    lines.push(
      ...instances.map(
        (i) => `${i} fenced: PostgreSQL stopped, pod kept (not Ready), no Service routes to it`,
      ),
    );
  } else {
    await waitFor(`${asked} of ${name} unfenced`, wait.timeoutMs, async () =>
      unfenceProgress(instances, await getJson<Resource>(target, [kind.resource, name]), await pods()),
    );
    lines.push(...instances.map((i) => `${i} unfenced: PostgreSQL running, pod Ready`), `${name}: Available`);
  }
  return lines;
}
