// What the members' pods say beyond etcd's own view, for the status: which still run in the pod
// that restored them from a backup, and which the kubelet does not report Ready (or which have no
// pod, or one being deleted).
import type { V1Pod } from '@kubernetes/client-node';
import { hasReadyCondition, isBeingDeleted } from '@homeostat/reconcile';
import type { DesiredMember } from '../membership/membership-reconciler.ts';
import { carriesRestore } from './backup/restore-pod.ts';

/** What the members' pods say beyond etcd's view: which still carry a restore, which are not Ready. */
export function memberPodFacts(
  desired: readonly DesiredMember[],
  podOf: (name: string) => V1Pod | undefined,
): { restoreCarriedBy: string[]; podsNotReady: Map<string, string> } {
  const pods = desired.map((d) => ({ name: d.name, pod: podOf(d.name) }));
  const notReady = new Map<string, string>();
  for (const { name, pod } of pods) {
    const why = !pod
      ? 'no pod'
      : isBeingDeleted(pod)
        ? 'its pod is being deleted'
        : !hasReadyCondition(pod)
          ? 'its pod is not Ready'
          : undefined;
    if (why) notReady.set(name, why);
  }
  return {
    restoreCarriedBy: pods.filter(({ pod }) => pod && carriesRestore(pod)).map(({ name }) => name),
    podsNotReady: notReady,
  };
}
