// A spread (api/spread-schema.ts) as the pod's topologySpreadConstraints.
import type { V1TopologySpreadConstraint } from '@kubernetes/client-node';
import type { SpreadPolicy } from '../api/spread-schema.ts';

/**
 * The constraints for `spread` over the pods `matchLabels` selects; undefined when Disabled.
 * `matchLabelKeys`: pod labels whose values also split the count (`pod-template-hash`, so that a
 * Deployment's old and new ReplicaSets are spread each on its own during a rollout).
 */
export function topologySpreadConstraints(
  spread: { readonly policy: SpreadPolicy; readonly topologyKey: string },
  matchLabels: Record<string, string>,
  matchLabelKeys: readonly string[] = [],
): V1TopologySpreadConstraint[] | undefined {
  if (spread.policy === 'Disabled') return undefined;
  return [
    {
      maxSkew: 1,
      topologyKey: spread.topologyKey,
      whenUnsatisfiable: spread.policy === 'Required' ? 'DoNotSchedule' : 'ScheduleAnyway',
      // Only nodes the pods may run on are domains: with the default (Ignore) a tainted
      // control-plane node counts as an empty one, and under Required a pod would stay Pending.
      nodeTaintsPolicy: 'Honor',
      labelSelector: { matchLabels },
      ...(matchLabelKeys.length > 0 ? { matchLabelKeys: [...matchLabelKeys] } : {}),
    },
  ];
}
