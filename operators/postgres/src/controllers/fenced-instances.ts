// Which instances are fenced on request (the cluster's fencedInstances annotation), and what a
// pod says of its own fence. A request that cannot be read changes nothing: the instances fenced
// now stay fenced and the others stay up, and the problem is reported (ADR 0223).
import type { V1Pod } from '@kubernetes/client-node';
import { fencedInstancesAnnotation, parseFencingRequest } from '../api/fencing-request.ts';
import type { PostgresCluster } from '../api/postgres-cluster-types.ts';
import { instanceNames, ordinalOf } from './cluster-names.ts';
import { annotationKeys } from './operand-labels.ts';

export interface FencedOnRequest {
  /** The instances to fence now. */
  readonly instances: ReadonlySet<string>;
  /** Why the request is not (wholly) followed, when it is not. */
  readonly problem?: string;
}

/** Whether the operator fenced this pod: PostgreSQL stays stopped in it while the annotation is there. */
export function isFencedPod(pod: V1Pod | undefined): boolean {
  return pod?.metadata?.annotations?.[annotationKeys.fenced] === 'true';
}

/**
 * How long a primary just unfenced has to start again before the failover engine counts its
 * silence as a failure: its entrypoint sees the fence gone within a second or two of the kubelet
 * updating the pod's downward API volume, and a primary stopped by a fast shutdown needs no
 * recovery. Bounded, so that a primary that does not come back is still failed over.
 */
export const unfenceGraceMs = 60_000;

/**
 * Why the failover engine must not count the primary's silence now, or undefined: it is out of
 * service on purpose (fenced on request, or its pod still fenced while the unfence is written), or
 * it was just unfenced and is starting again (ADR 0223).
 */
export function primaryHold(
  primary: string | undefined,
  outOfService: ReadonlySet<string>,
  pod: V1Pod | undefined,
  now: number,
): string | undefined {
  if (primary === undefined) return undefined;
  if (outOfService.has(primary)) return `the primary ${primary} is fenced`;
  if (justUnfenced(pod, now)) return `the primary ${primary} was just unfenced and is starting`;
  return undefined;
}

/** Whether `pod` was unfenced less than unfenceGraceMs before `now`. */
export function justUnfenced(pod: V1Pod | undefined, now: number): boolean {
  const at = Date.parse(pod?.metadata?.annotations?.[annotationKeys.unfencedAt] ?? '');
  return !isFencedPod(pod) && Number.isFinite(at) && now - at < unfenceGraceMs;
}

/**
 * The instances out of service on purpose: fenced on request, or with a pod still fenced whose
 * unfence this turn writes. They are never routed and sit rolling restarts out; unfenced, they
 * roll. A pod being deleted is left out: its annotation is never removed (nothing writes to a pod
 * on its way out), and counting it would hold the failover of its instance for as long as it
 * stays Terminating (on a node that went away, until someone removes it).
 */
export function outOfService(
  fenced: ReadonlySet<string>,
  pods: ReadonlyMap<string, V1Pod>,
): ReadonlySet<string> {
  const stillFenced = [...pods]
    .filter(([, pod]) => isFencedPod(pod) && !pod.metadata?.deletionTimestamp)
    .map(([instance]) => instance);
  return new Set([...fenced, ...stillFenced]);
}

/** The instances the cluster's annotation fences, given its instance pods (by name). */
export function fencedOnRequest(cluster: PostgresCluster, pods: ReadonlyMap<string, V1Pod>): FencedOnRequest {
  const name = cluster.metadata?.name ?? '';
  const request = parseFencingRequest(cluster.metadata?.annotations?.[fencedInstancesAnnotation]);
  if (!request.valid) {
    const kept = [...pods].filter(([, pod]) => isFencedPod(pod)).map(([instance]) => instance);
    return {
      instances: new Set(kept),
      problem: `${request.problem}; fencing is left as it is (${kept.length ? `fenced: ${kept.sort().join(', ')}` : 'nothing fenced'})`,
    };
  }
  if (request.instances === 'all') {
    return { instances: new Set([...instanceNames(name, cluster.spec.instances), ...pods.keys()]) };
  }
  const unknown = request.instances.filter((i) => ordinalOf(name, i) === undefined);
  return {
    instances: new Set(request.instances.filter((i) => ordinalOf(name, i) !== undefined)),
    ...(unknown.length
      ? {
          problem: `${fencedInstancesAnnotation} names ${unknown.join(', ')}, not an instance of ${name} (its instances are ${name}-0 to ${name}-${cluster.spec.instances - 1})`,
        }
      : {}),
  };
}
