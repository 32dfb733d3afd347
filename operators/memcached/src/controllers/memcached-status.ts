// Status of a Memcached, computed from its Deployment, its pods and what the last write attempt said.
import type { V1Deployment, V1Pod } from '@kubernetes/client-node';
import { isPodReady, setCondition, type ConditionInput } from '@homeostat/reconcile';
import { conditionTypes, type Memcached, type MemcachedStatusFields } from '../api/memcached-types.ts';
import { maxUnavailable } from './desired-pdb.ts';
import { selectorString } from './operand-labels.ts';

export interface Observed {
  deployment: V1Deployment | undefined;
  pods: readonly V1Pod[];
  /** Why writing the desired state failed in this reconcile, if it did (a sentence for users). */
  writeError?: { reason: string; message: string };
  /** Why the Deployment was left as it is: a Secret spec.tls or spec.sasl names cannot be used. */
  secretProblem?: { reason: string; message: string };
}

/** Pods a Memcached needs ready to count as Available. */
export function minimumAvailable(memcached: Memcached): number {
  const size = memcached.spec.size;
  return size <= 1 ? size : Math.max(1, size - maxUnavailable(memcached));
}

function deploymentCondition(deployment: V1Deployment | undefined, type: string) {
  return deployment?.status?.conditions?.find((c) => c.type === type);
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
  const deployment = observed.deployment;
  if (!deployment) {
    return { type, status: 'True', reason: 'Creating', message: 'creating the Deployment' };
  }
  const status = deployment.status ?? {};
  const replicas = status.replicas ?? 0;
  const ready = status.readyReplicas ?? 0;
  const updated = status.updatedReplicas ?? 0;
  if ((status.observedGeneration ?? 0) < (deployment.metadata?.generation ?? 0)) {
    return {
      type,
      status: 'True',
      reason: 'RollingOut',
      message: 'the Deployment has not seen the latest change yet',
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
  const stalled = deploymentCondition(observed.deployment, 'Progressing');
  if (stalled?.status === 'False' && stalled.reason === 'ProgressDeadlineExceeded') {
    return {
      type,
      status: 'True',
      reason: 'RolloutStalled',
      message: stalled.message ?? 'the rollout made no progress',
    };
  }
  const failure = deploymentCondition(observed.deployment, 'ReplicaFailure');
  if (failure?.status === 'True') {
    return {
      type,
      status: 'True',
      reason: 'PodCreationFailed',
      message: failure.message ?? 'pods cannot be created',
    };
  }
  return { type, status: 'False', reason: 'AsExpected', message: '' };
}

/** The status to write: counts and pod names from what is observed, and the three conditions. */
export function memcachedStatus(
  memcached: Memcached,
  observed: Observed,
  now = new Date(),
): MemcachedStatusFields {
  const generation = memcached.metadata?.generation;
  const name = memcached.metadata?.name ?? '';
  const ready = observed.deployment?.status?.readyReplicas ?? 0;
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
    replicas: observed.deployment?.status?.replicas ?? 0,
    readyReplicas: ready,
    nodes: observed.pods
      .filter(isPodReady)
      .map((p) => p.metadata?.name ?? '')
      .sort(),
    selector: selectorString(name),
    conditions: conditions ?? [],
  };
}
