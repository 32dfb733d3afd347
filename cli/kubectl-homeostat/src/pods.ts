// The pods of a Homeostat resource as the plugin reads them: which ones belong to it, and the
// little of each pod the waiting commands look at.
import type { HomeostatKind } from './kinds.ts';

export interface Pod {
  metadata?: { name?: string; annotations?: Record<string, string>; deletionTimestamp?: string };
  status?: { conditions?: { type: string; status: string }[] };
}

/** The label selector of the pods the operator of `kind` made for resource `name`. */
export function podSelector(kind: HomeostatKind, name: string): string {
  const labels = { 'app.kubernetes.io/instance': name, ...kind.podLabels };
  return Object.entries(labels)
    .map(([key, value]) => `${key}=${value}`)
    .join(',');
}

export function podName(pod: Pod): string {
  return pod.metadata?.name ?? '?';
}

/** Whether the kubelet reports the pod Ready (what Services route by). */
export function isReady(pod: Pod): boolean {
  return (pod.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
}

/** Whether the pod is on its way out (deleted, its containers stopping). */
export function isGoing(pod: Pod): boolean {
  return pod.metadata?.deletionTimestamp !== undefined;
}
