// One reconcile's turn of the failover engine for a cluster: the first primary's bootstrap noticed,
// then runSteps (drive.ts) with the state in the cluster's status, the instances reached through
// `endpointOf` and the world made of pods (kubernetes-world.ts).
import type { KubeClient } from '@homeostat/reconcile';
import type { Fencing, InstanceActions, Routing } from '../failover/actions.ts';
import type { PostgresCluster } from '../api/postgres-cluster-types.ts';
import { clusterView, type ClusterView } from '../failover/cluster-view.ts';
import { defaultPolicy, type FailoverPolicy } from '../failover/decide.ts';
import { observeAll, runSteps } from '../failover/drive.ts';
import { settledState, withoutFailingClock, type FailoverState } from '../failover/failover-state.ts';
import type { ConnectOptions, Credentials, InstanceEndpoint } from '../instance/instance.ts';
import type { Lsn } from '../instance/lsn.ts';
import type { InstanceStatus } from '../instance/observe.ts';
import type { EngineEvent, EngineOutcome } from '../failover/outcomes.ts';
import type { EngineWorld } from '../failover/perform.ts';
import { adoptRetained, type SeenPositions } from './adopt-retained.ts';
import { instanceName } from './cluster-names.ts';
import { isolatedPrimaryStopsWithinMs } from './desired-pod.ts';
import { countsFromStatus, statusStore } from './failover-status.ts';

export interface FailoverRunInputs {
  readonly cluster: PostgresCluster;
  /** The state read from the API server just now; undefined before the first primary came up. */
  readonly state: FailoverState | undefined;
  /** Every instance that exists or should. */
  readonly instances: readonly string[];
  /** Instances whose claims an earlier cluster of this name left (retained-claims.ts). */
  readonly retained: readonly string[];
  readonly endpointOf: (instance: string) => InstanceEndpoint;
  readonly credentials: Credentials;
  readonly connect: ConnectOptions;
  /** Writes as `failoverFieldManager`. */
  readonly failoverClient: KubeClient;
  readonly world: { readonly fencing: Fencing; readonly routing: Routing; readonly actions: InstanceActions };
  /** The instance that should be primary, when one is asked for. */
  readonly desiredPrimary?: string;
  /**
   * Why the engine only observes in this turn while the primary does not answer as one: no
   * failover, no switchover (the primary fenced on request, or just unfenced and starting).
   */
  readonly hold?: string;
  readonly lastPrimaryLsn?: Lsn;
  /** What the previous adoption turn of a cluster made again on retained claims saw. */
  readonly retainedSeen?: SeenPositions;
  readonly maxLagBytes?: bigint;
  readonly electionTimeoutMs?: number;
  readonly emit: (event: EngineEvent) => void;
}

export interface FailoverRunResult {
  readonly state: FailoverState | undefined;
  readonly view: ClusterView;
  readonly outcome?: EngineOutcome;
  readonly retryAfterMs?: number;
  readonly lastPrimaryLsn?: Lsn;
  /** Before the first primary: why none is chosen yet, when the reason is worth showing. */
  readonly bootstrapWaiting?: string;
  /** For the next adoption turn (keep it with the cluster while it is adopted). */
  readonly retainedSeen?: SeenPositions;
  /** Why this turn only observed: the `hold` it was given, while the primary did not answer. */
  readonly held?: string;
}

/** `failoverDelay` ("500ms", "2s", "1m") in milliseconds. */
export function durationMs(text: string): number {
  const match = /^([0-9]+)(ms|s|m)$/.exec(text);
  if (!match) throw new Error(`not a duration: '${text}'`);
  const units = { ms: 1, s: 1000, m: 60_000 } as const;
  return Number(match[1]) * units[match[2] as keyof typeof units];
}

/** The engine's policy from the cluster's spec. */
export function policyOf(
  cluster: PostgresCluster,
  maxLagBytes?: bigint,
  electionTimeoutMs?: number,
): FailoverPolicy {
  const { synchronous } = cluster.spec.postgresql;
  return {
    ...defaultPolicy,
    failoverDelayMs: durationMs(cluster.spec.failoverDelay),
    isolatedPrimaryStopsWithinMs,
    ...(maxLagBytes === undefined ? {} : { maxLagBytes }),
    ...(electionTimeoutMs === undefined ? {} : { electionTimeoutMs }),
    ...(synchronous.mode === 'off'
      ? {}
      : { synchronous: { number: synchronous.number, dataDurability: synchronous.mode } }),
  };
}

export async function runFailover(inputs: FailoverRunInputs): Promise<FailoverRunResult> {
  const { cluster } = inputs;
  const key = { name: cluster.metadata?.name ?? '', namespace: cluster.metadata?.namespace ?? 'default' };
  const world: EngineWorld = {
    instances: inputs.instances.map(inputs.endpointOf),
    credentials: inputs.credentials,
    connect: inputs.connect,
    ...inputs.world,
    emit: inputs.emit,
  };
  const store = statusStore(
    inputs.failoverClient,
    { ...key, uid: cluster.metadata?.uid },
    settledState(instanceName(key.name, 0)),
    countsFromStatus(cluster),
  );

  if (!inputs.state && inputs.retained.length) {
    // Created again on retained claims: the earlier primary is not known, the data decides.
    const { synchronous } = policyOf(cluster, inputs.maxLagBytes, inputs.electionTimeoutMs);
    const turn = await adoptRetained(
      world,
      store,
      inputs.retained,
      synchronous,
      inputs.retainedSeen ? { previous: inputs.retainedSeen } : {},
    );
    return {
      state: turn.state,
      view: clusterView(turn.observed),
      ...(turn.waiting === undefined ? {} : { bootstrapWaiting: turn.waiting }),
      ...(turn.seen === undefined ? {} : { retainedSeen: turn.seen }),
    };
  }
  if (!inputs.state) {
    // Bootstrapping: nothing to fail over to until the first primary has taken writes once.
    const observed = await observeAll(world);
    const first = observed.find((s) => s.name === instanceName(key.name, 0));
    if (!(first?.reachable && first.role === 'primary'))
      return { state: undefined, view: clusterView(observed) };
    const state = settledState(first.name);
    await store.save(state);
    return { state, view: clusterView(observed), lastPrimaryLsn: first.currentLsn };
  }

  let observed: readonly InstanceStatus[] | undefined;
  if (inputs.hold !== undefined && !inputs.state.operation) {
    observed = await observeAll(world);
    const primary = observed.find((s) => s.name === inputs.state?.currentPrimary);
    if (!(primary?.reachable && primary.role === 'primary')) {
      // The silence is not counted, and neither is a clock started just before the hold (a probe
      // that saw the fenced primary stopping): once the hold ends, failoverDelay runs from zero.
      const state = withoutFailingClock(inputs.state);
      if (state !== inputs.state) await store.save(state);
      return { state, view: clusterView(observed), held: inputs.hold };
    }
  }
  const result = await runSteps({
    world,
    store,
    // Decided on the hold's own probe: probed again, a primary the fence stops in between would
    // be failed over in this very turn under failoverDelay 0s.
    ...(observed === undefined ? {} : { observed }),
    policy: policyOf(cluster, inputs.maxLagBytes, inputs.electionTimeoutMs),
    ...(inputs.desiredPrimary === undefined ? {} : { desiredPrimary: inputs.desiredPrimary }),
    ...(inputs.lastPrimaryLsn === undefined ? {} : { lastPrimaryLsn: inputs.lastPrimaryLsn }),
  });
  return {
    state: result.state,
    view: clusterView(result.observed),
    ...(result.outcome ? { outcome: result.outcome } : {}),
    ...(result.retryAfterMs === undefined ? {} : { retryAfterMs: result.retryAfterMs }),
    ...(result.lastPrimaryLsn === undefined ? {} : { lastPrimaryLsn: result.lastPrimaryLsn }),
  };
}
