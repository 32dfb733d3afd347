// Which role, if any, an instance whose pod is missing is created in. The one hazard: a new pod on
// the claim of a primary whose old pod may still run (a force deletion does not wait for the
// kubelet), which would start a second postmaster on the same data directory.
import type { FailoverState } from '../failover/failover-state.ts';
import type { InstanceRole } from './desired-pod.ts';
import { instanceName } from './cluster-names.ts';

export interface MissingPodInputs {
  /** The failover engine's state; undefined until the first primary was seen taking writes. */
  readonly state: FailoverState | undefined;
  readonly clusterName: string;
  /** spec.instances */
  readonly instances: number;
  /** Instances on claims an earlier cluster of this name left (retained-claims.ts). */
  readonly retained?: readonly string[];
}

/** The instance that is (or, before the first primary came up, will be) primary. */
export function primaryOf(clusterName: string, state: FailoverState | undefined): string {
  return state?.currentPrimary ?? instanceName(clusterName, 0);
}

/** Before the first primary, on claims an earlier cluster of this name left. */
export function adopting(inputs: Pick<MissingPodInputs, 'state' | 'retained'>): boolean {
  return !inputs.state && (inputs.retained?.length ?? 0) > 0;
}

/** The role `instance`'s missing pod is created in, or undefined to leave it missing for now. */
export function missingPodRole(instance: string, inputs: MissingPodInputs): InstanceRole | undefined {
  const { state } = inputs;
  // Created again on retained data: no instance is known to be the primary; all start as
  // standbys and the engine promotes the one whose data goes furthest (ADR 0211).
  if (adopting(inputs)) return 'replica';
  return state?.operation ? roleDuringOperation(instance, state) : settledRole(instance, inputs);
}

/**
 * While a failover or switchover runs: the old primary is created as a primary only once the
 * engine brings it back (no replica could replace it; it was fenced, its pod gone, before that
 * step began); the instances the operation fenced or is promoting come back when it is over; any
 * other is a replica, which takes no write and waits for a primary, so it cannot make a second
 * writer (ADR 0206).
 */
function roleDuringOperation(instance: string, state: FailoverState): InstanceRole | undefined {
  const operation = state.operation;
  if (!operation) return undefined;
  if (instance === state.currentPrimary) return operation.step === 'reinstating' ? 'primary' : undefined;
  if (instance === state.targetPrimary || operation.fenced.includes(instance)) return undefined;
  return 'replica';
}

/**
 * With no operation running: a primary whose pod is gone is the failover's to replace or to bring
 * back (the `reinstating` step), whatever the last refusal said: a refusal is about a moment (the
 * primary answered "shutting down" while its pod was being deleted), and recreating the pod then
 * would race the old one. Only a primary nobody could replace (a lone instance, or the first one
 * before it ever took writes) is created in place.
 */
function settledRole(instance: string, inputs: MissingPodInputs): InstanceRole | undefined {
  if (instance !== primaryOf(inputs.clusterName, inputs.state)) return 'replica';
  if (inputs.state && inputs.instances > 1) return undefined;
  return 'primary';
}
