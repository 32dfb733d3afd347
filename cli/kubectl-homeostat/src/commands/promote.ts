// `kubectl homeostat promote CLUSTER INSTANCE`: a switchover, as the guide does it by hand
// (spec.primary), then waits until the instance takes writes; when it does not in time, the error
// carries the operator's last refusal.
import { findResource } from '../find-resource.ts';
import { kindNamed, UsageError } from '../kinds.ts';
import { getJson, mergePatch, type KubectlTarget } from '../kubectl.ts';
import { conditionsOf, type Resource } from '../status-view.ts';
import { waitFor } from '../wait.ts';

interface Cluster extends Resource {
  spec?: { primary?: string; instances?: number };
}

const postgresCluster = kindNamed('pgc');

export async function promote(
  target: KubectlTarget,
  clusterName: string | undefined,
  instance: string | undefined,
  wait: { timeoutMs: number } | undefined,
): Promise<string[]> {
  if (!clusterName || !instance || !postgresCluster) throw new UsageError('promote takes CLUSTER INSTANCE');
  const { kind, resource } = await findResource<Cluster>(target, clusterName, [postgresCluster]);
  const name = resource.metadata?.name ?? clusterName;
  const instances = resource.spec?.instances ?? 0;
  const ordinal = instance.startsWith(`${name}-`) ? Number(instance.slice(name.length + 1)) : NaN;
  if (!Number.isInteger(ordinal) || ordinal < 0 || ordinal >= instances)
    throw new UsageError(`${instance} is not an instance of ${name} (${name}-0 to ${name}-${instances - 1})`);
  if (resource.status?.['currentPrimary'] === instance)
    return [`${instance} is already the primary of ${name}`];
  const requestedAt = Date.now() - 1000; // condition times have a one-second grain
  await mergePatch(target, kind.resource, name, { spec: { primary: instance } });
  const lines = [`${name}: switchover to ${instance} requested (spec.primary)`];
  if (!wait) return lines;
  await waitFor(`${instance} the primary of ${name}`, wait.timeoutMs, async () => {
    const status = (await getJson<Cluster>(target, [kind.resource, name]))?.status ?? {};
    const refusal = conditionsOf(status).find(
      (c) => c.reason === 'SwitchoverRefused' && Date.parse(c.lastTransitionTime ?? '') >= requestedAt,
    );
    if (status['currentPrimary'] === instance && status['phase'] === 'Healthy') return true;
    // The operator tries again while spec.primary names the instance: a refusal is the reason so
    // far, not the end (a timeout then says it).
    const now = `phase ${String(status['phase'])}, primary ${String(status['currentPrimary'])}`;
    return refusal
      ? `${now}; the operator refused the last attempt: ${refusal.message ?? refusal.reason}`
      : now;
  });
  lines.push(`${instance} is the primary of ${name}`);
  return lines;
}
