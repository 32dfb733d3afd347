// `kubectl homeostat restart [TYPE/]NAME`: a rolling restart of a Memcached, EtcdCluster or
// PostgreSQLCluster. It only asks (the restartedAt annotation, set to now); each operator rolls the
// pods its own safe way. Then it waits until every pod carries that request and is Ready and the
// resource is Available.
import { findResource } from '../find-resource.ts';
import { homeostatKinds, UsageError } from '../kinds.ts';
import { getJson, mergePatch, type KubectlTarget } from '../kubectl.ts';
import { isGoing, isReady, podName, podSelector, type Pod } from '../pods.ts';
import { conditionsOf, type Resource } from '../status-view.ts';
import { waitFor } from '../wait.ts';

/**
 * The annotation the operators read (libs/operator-kit's restartedAtAnnotation; the plugin is
 * bundled alone, so it keeps this copy, which a test holds equal to the library's).
 */
export const restartedAtAnnotation = 'homeostat.dev/restartedAt';

/** The merge patch that asks for a restart: only this annotation changes. */
export function restartPatch(requestedAt: string): { metadata: { annotations: Record<string, string> } } {
  return { metadata: { annotations: { [restartedAtAnnotation]: requestedAt } } };
}

/** true once every pod carries `requestedAt`, none is going and all are Ready, and `resource` is Available; else why not. */
export function restartProgress(
  requestedAt: string,
  resource: Resource | undefined,
  pods: readonly Pod[],
): true | string {
  const behind = pods.filter((p) => p.metadata?.annotations?.[restartedAtAnnotation] !== requestedAt);
  const going = pods.filter(isGoing);
  const notReady = pods.filter((p) => !isReady(p));
  const available = conditionsOf(resource?.status ?? {}).find((c) => c.type === 'Available');
  const why = [
    ...(pods.length === 0 ? ['no pods'] : []),
    ...(behind.length ? [`not restarted yet: ${behind.map(podName).join(', ')}`] : []),
    ...(going.length ? [`stopping: ${going.map(podName).join(', ')}`] : []),
    ...(notReady.length ? [`not Ready: ${notReady.map(podName).join(', ')}`] : []),
    ...(available?.status === 'True' ? [] : [`Available ${available?.status ?? 'unknown'}`]),
  ];
  return why.length === 0 ? true : why.join('; ');
}

export async function restart(
  target: KubectlTarget,
  resourceName: string | undefined,
  wait: { timeoutMs: number } | undefined,
  now = new Date(),
): Promise<string[]> {
  if (!resourceName) throw new UsageError('restart takes [TYPE/]NAME');
  const restartable = homeostatKinds.filter((k) => k.podLabels !== undefined);
  const { kind, resource } = await findResource(target, resourceName, restartable);
  const name = resource.metadata?.name ?? resourceName;
  // RFC 3339 with milliseconds: two restarts asked within one second are two values, so two restarts.
  const requestedAt = now.toISOString();
  await mergePatch(target, kind.resource, name, restartPatch(requestedAt));
  const lines = [`${kind.kind} ${name}: rolling restart requested (${restartedAtAnnotation}=${requestedAt})`];
  if (!wait) return lines;
  const selector = podSelector(kind, name);
  let count = 0;
  await waitFor(`${kind.kind} ${name} restarted`, wait.timeoutMs, async () => {
    const current = await getJson<Resource>(target, [kind.resource, name]);
    const pods = (await getJson<{ items: Pod[] }>(target, ['pods', '-l', selector]))?.items ?? [];
    count = pods.length;
    return restartProgress(requestedAt, current, pods);
  });
  lines.push(`${kind.kind} ${name}: every pod restarted and Ready (${count}), Available`);
  return lines;
}
