// Pod readiness as the kubelet reports it, read the same way by every operator.
import type { V1Pod } from '@kubernetes/client-node';

/** Whether the kubelet's Ready condition of `pod` is True (a pod it never reported on is not). */
export function hasReadyCondition(pod: V1Pod): boolean {
  return pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
}

/** Ready in the kubelet's eyes and not going away: a pod being deleted serves no longer. */
export function isPodReady(pod: V1Pod): boolean {
  return !pod.metadata?.deletionTimestamp && hasReadyCondition(pod);
}
