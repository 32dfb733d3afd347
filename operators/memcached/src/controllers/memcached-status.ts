// Status of a Memcached, computed from its StatefulSet, its pods and what the last write attempt said.
import type { V1Pod, V1StatefulSet } from '@kubernetes/client-node';
import { isPodReady, setCondition, type ConditionInput } from '@homeostat/reconcile';
import { conditionTypes, type Memcached, type MemcachedStatusFields } from '../api/memcached-types.ts';
import { maxUnavailable } from './desired-pdb.ts';
import { memcachedServers } from './memcached-servers.ts';
import { selectorString } from './operand-labels.ts';

export interface Observed {
  statefulSet: V1StatefulSet | undefined;
  pods: readonly V1Pod[];
  /** Why writing the desired state failed in this reconcile, if it did (a sentence for users). */
  writeError?: { reason: string; message: string };
  /** Why the StatefulSet was left as it is: a Secret spec.tls or spec.sasl names cannot be used. */
  secretProblem?: { reason: string; message: string };
}

/** Pods a Memcached needs ready to count as Available. */
export function minimumAvailable(memcached: Memcached): number {
  const size = memcached.spec.size;
  return size <= 1 ? size : Math.max(1, size - maxUnavailable(memcached));
}

function available(memcached: Memcached, ready: number): ConditionInput {
  const size = memcached.spec.size;
  if (size === 0) {
    return { type: conditionTypes.available, status: 'False', reason: 'ScaledToZero', message: 'size is 0' };
  }
  const needed = minimumAvailable(memcached);
  return ready >= needed
    ? {
        type: conditionTypes.available,
        status: 'True',
        reason: 'MinimumPodsReady',
        message: `${ready} of ${size} pods ready (${needed} needed)`,
      }
    : {
        type: conditionTypes.available,
        status: 'False',
        reason: 'NotEnoughPodsReady',
        message: `${ready} of ${size} pods ready; ${needed} needed`,
      };
}

function progressing(memcached: Memcached, observed: Observed): ConditionInput {
  const type = conditionTypes.progressing;
  const size = memcached.spec.size;
  const statefulSet = observed.statefulSet;
  if (!statefulSet) {
    return { type, status: 'True', reason: 'Creating', message: 'creating the StatefulSet' };
  }
  const status = statefulSet.status;
  const replicas = status?.replicas ?? 0;
  const ready = status?.readyReplicas ?? 0;
  const updated = status?.updatedReplicas ?? 0;
  if ((status?.observedGeneration ?? 0) < (statefulSet.metadata?.generation ?? 0)) {
    return {
      type,
      status: 'True',
      reason: 'RollingOut',
      message: 'the StatefulSet has not seen the latest change yet',
    };
  }
  if (replicas > size) {
    return {
      type,
      status: 'True',
      reason: 'ScalingDown',
      message: `${replicas} pods, scaling down to ${size}`,
    };
  }
  if (replicas < size) {
    return { type, status: 'True', reason: 'ScalingUp', message: `${replicas} pods, scaling up to ${size}` };
  }
  if (updated < size) {
    return { type, status: 'True', reason: 'RollingOut', message: `${updated} of ${size} pods updated` };
  }
  if (ready < size) {
    return { type, status: 'True', reason: 'WaitingForPods', message: `${ready} of ${size} pods ready` };
  }
  return { type, status: 'False', reason: 'Complete', message: `all ${size} pods updated and ready` };
}

function degraded(observed: Observed): ConditionInput {
  const type = conditionTypes.degraded;
  if (observed.writeError) {
    return { type, status: 'True', reason: observed.writeError.reason, message: observed.writeError.message };
  }
  if (observed.secretProblem) {
    const { reason, message } = observed.secretProblem;
    return { type, status: 'True', reason, message };
  }
  return { type, status: 'False', reason: 'AsExpected', message: '' };
}

/** The status to write: counts and pod names from what is observed, the server list, and the three conditions. */
export function memcachedStatus(
  memcached: Memcached,
  observed: Observed,
  now = new Date(),
): MemcachedStatusFields {
  const generation = memcached.metadata?.generation;
  const name = memcached.metadata?.name ?? '';
  const ready = observed.statefulSet?.status?.readyReplicas ?? 0;
  let conditions = memcached.status?.conditions;
  for (const condition of [
    available(memcached, ready),
    progressing(memcached, observed),
    degraded(observed),
  ]) {
    conditions = setCondition(conditions, condition, generation, now);
  }
  return {
    ...(generation === undefined ? {} : { observedGeneration: generation }),
    replicas: observed.statefulSet?.status?.replicas ?? 0,
    readyReplicas: ready,
    nodes: observed.pods
      .filter(isPodReady)
      .map((p) => p.metadata?.name ?? '')
      .sort(),
    selector: selectorString(name),
    servers: memcachedServers(memcached),
    conditions: conditions ?? [],
  };
}
