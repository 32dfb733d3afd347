// The failover engine's decisions, as one pure function: from what the instances answered and the
// persisted state, the next action and the state once that action has succeeded. Nothing here
// does I/O, so every decision is unit-tested, and an engine restarted with the persisted state
// decides exactly as the one that stopped would have.
//
// The protocol (drive.ts runs it): load the state S, observe, decide → (action A, next state S'),
// perform A, save S'. A is the work of step S and is idempotent, so a crash between performing A
// and saving S' only repeats A. Whatever must be on record before an action runs (the instance
// about to be promoted, above all) is saved by a step of its own whose action is `none`.
import { chooseFailoverCandidate, type CandidateRules, type CandidateVerdict } from './candidate.ts';
import { settledState, type FailoverState, type Operation, type OperationStep } from './failover-state.ts';
import type { InstanceEndpoint } from '../instance/instance.ts';
import { formatLsn, type Lsn } from '../instance/lsn.ts';
import type { InstanceStatus, PrimaryStatus, ReplicaStatus } from '../instance/observe.ts';
import type { EngineEvent, RefusalCode } from './outcomes.ts';
import { slotName, straySlots } from '../instance/slots.ts';
import { desiredSynchronousStandbyNames, type SynchronousReplication } from '../instance/synchronous.ts';
import {
  observeCommitQuorums,
  parseCommitQuorum,
  sameQuorum,
  type CommitQuorum,
  type CommitQuorumRecord,
} from './commit-quorums.ts';

export interface FailoverPolicy {
  /** How long the primary must stay failing before a failover starts. */
  readonly failoverDelayMs: number;
  /** A replica whose replayed WAL is further than this behind is never promoted. */
  readonly maxLagBytes: bigint;
  /** How long a failover waits for the replicas' WAL receivers to let go of the fenced primary. */
  readonly walReceiverStopTimeoutMs: number;
  /** How long a switchover waits for its target to receive the quiesced primary's last WAL. */
  readonly switchoverCatchUpTimeoutMs: number;
  /**
   * A primary cut off from everything stops itself within this long of the cut (the operator's
   * self-fence container). A failover promotes no sooner than this after the primary was first
   * seen failing (which is no sooner than the cut), so a primary whose fence could not be carried
   * out (its node cut off, its kubelet deaf to the pod's deletion) has stopped by then. 0: the
   * world has no self-fencing (the fence alone keeps the old primary from writing).
   */
  readonly isolatedPrimaryStopsWithinMs: number;
  /**
   * A WAL receiver silent for this long is not counted as streaming: a live sender is heard from
   * well within the standbys' `wal_receiver_timeout` (3 s; they ping it halfway through).
   */
  readonly silentReceiverMs: number;
  /**
   * How long a failover waits for an eligible replica before it brings the old primary back. Until
   * a replica is promoted the old primary holds every commit any replica has (a primary sends only
   * WAL it has flushed), so it is always a safe way out; waiting first lets a lagging replica catch
   * up and take over from a primary that may be broken.
   */
  readonly electionTimeoutMs: number;
  /**
   * How long the old primary, brought back, has to take writes again before a replica that became
   * eligible meanwhile is promoted instead (with nothing better it is waited for: crash recovery
   * may take long, and fencing it would start that over).
   */
  readonly reinstateTimeoutMs: number;
  /**
   * How long after a configuration reload every PostgreSQL process has applied it (each rereads it
   * on its own, within milliseconds): commits acknowledged under the previous synchronous standby
   * list are all written before the primary's WAL position this long after the new list is seen.
   */
  readonly reloadSettleMs: number;
  readonly synchronous?: SynchronousReplication;
}

export const defaultPolicy: FailoverPolicy = {
  failoverDelayMs: 2000,
  maxLagBytes: 16n * 1024n * 1024n,
  walReceiverStopTimeoutMs: 10_000,
  switchoverCatchUpTimeoutMs: 30_000,
  isolatedPrimaryStopsWithinMs: 0,
  silentReceiverMs: 5000,
  electionTimeoutMs: 10_000,
  reinstateTimeoutMs: 60_000,
  reloadSettleMs: 5000,
};

export interface DecideInput {
  readonly instances: readonly InstanceEndpoint[];
  /** One status per instance, observed just now. */
  readonly observed: readonly InstanceStatus[];
  readonly state: FailoverState;
  readonly now: number;
  readonly policy: FailoverPolicy;
  /** The instance that should be primary (a switchover is wanted when it is not). */
  readonly desiredPrimary?: string;
  /** Start a failover now, whatever the primary's health, for this reason. */
  readonly failoverNow?: string;
  /**
   * The primary's last WAL position the caller saw while it was healthy (kept in memory: it moves
   * with every write, so it is recorded in the state only when an operation starts).
   */
  readonly lastPrimaryLsn?: Lsn;
}

/** Work for the executor (execute.ts). Each is idempotent. */
export type Action =
  | { readonly type: 'none' }
  /** Nothing to do until something changes; look again after this long. */
  | { readonly type: 'wait'; readonly retryAfterMs: number }
  /** The primary is healthy: re-point stray replicas, set synchronous_standby_names when it differs. */
  | {
      readonly type: 'maintain';
      readonly primary: string;
      readonly repoint: readonly string[];
      readonly synchronousStandbyNames?: string;
      /** Replication slots of instances that are gone (scaled away): they would keep WAL forever. */
      readonly dropSlots?: readonly string[];
      /**
       * Running replicas whose slot the primary lacks (made at a failover's routing, which may
       * have failed): without it a replica never streams again.
       */
      readonly createSlots?: readonly string[];
      /**
       * The primary refuses writes (read-only by default) with no switchover in progress: the undo
       * of a switchover's quiesce failed. Clear it and route writes to the primary again.
       */
      readonly giveWritesBack?: true;
    }
  /** Withdraw write routing from `instance` and make sure it cannot take a write. */
  | { readonly type: 'fence'; readonly instance: string }
  /** Withdraw write routing, make `instance` read-only and end its client sessions. */
  | { readonly type: 'quiesce'; readonly instance: string }
  /** Give writes back to `instance` after a switchover that did not happen. */
  | { readonly type: 'undo-quiesce'; readonly instance: string }
  /** Stop `instance` cleanly (its last WAL reaches the standbys), then fence it. */
  | { readonly type: 'stop'; readonly instance: string; readonly lastLsn: Lsn | undefined }
  | { readonly type: 'promote'; readonly instance: string; readonly synchronousStandbyNames: string }
  /** Slots for the others on the new primary, the other replicas re-pointed, then writes routed to it. */
  | {
      readonly type: 'route';
      readonly primary: string;
      readonly slotsFor: readonly string[];
      readonly repoint: readonly string[];
    }
  /** Restart the fenced instances as replicas of `primary` (pg_rewind, else a fresh clone). */
  | { readonly type: 'rejoin'; readonly instances: readonly string[]; readonly primary: string };

export interface ActionFailure {
  readonly code: RefusalCode;
  /** The refusal's sentence, given the error's message. */
  readonly reason: (cause: string) => string;
  readonly next?: FailoverState;
  readonly action?: Action;
}

export interface Decision {
  readonly action: Action;
  /** The state once `action` has succeeded. */
  readonly next: FailoverState;
  /** When `action` fails: the refusal, and where to go (with a clean-up action) instead of staying. */
  readonly onFailure?: ActionFailure;
  /** This step refuses to go on (it is tried again on the next probe unless `next` moved on). */
  readonly refusal?: { readonly code: RefusalCode; readonly reason: string };
  readonly events: readonly EngineEvent[];
  /** The candidates' verdicts, when this step chose the instance to promote. */
  readonly verdicts?: readonly CandidateVerdict[];
  /** Once `action` succeeds, the operation is complete. */
  readonly completes?: boolean;
  /**
   * The step waits for something outside the engine (the controller creating a pod, a process
   * starting): the run ends after `action`, and the next probe goes on.
   */
  readonly yields?: boolean;
}

/** The next action and state for `input.state`. */
export function decide(input: DecideInput): Decision {
  const operation = input.state.operation;
  if (!operation) return decideSettled(input);
  switch (operation.step) {
    case 'quiescing':
      return decideQuiescing(input, operation);
    case 'catching-up':
      return decideCatchingUp(input, operation);
    case 'stopping':
      return decideStopping(input, operation);
    case 'fencing':
      return decideFencing(input, operation);
    case 'electing':
      return decideElecting(input, operation);
    case 'promoting':
      return decidePromoting(input, operation);
    case 'routing':
      return decideRouting(input, operation);
    case 'rejoining':
      return decideRejoining(input, operation);
    case 'reinstating':
      return decideReinstating(input, operation);
  }
}

const statusOf = (input: DecideInput, name: string): InstanceStatus =>
  input.observed.find((s) => s.name === name) ?? { name, reachable: false, error: 'not observed' };

const isPrimary = (s: InstanceStatus): s is PrimaryStatus => s.reachable && s.role === 'primary';
const isReplica = (s: InstanceStatus): s is ReplicaStatus => s.reachable && s.role === 'replica';

const endpointOf = (input: DecideInput, name: string): InstanceEndpoint | undefined =>
  input.instances.find((i) => i.name === name);

function withStep(
  input: DecideInput,
  operation: Operation,
  step: OperationStep,
  changes: Partial<FailoverState> = {},
  operationChanges: Partial<Operation> = {},
): FailoverState {
  return {
    ...input.state,
    ...changes,
    // A deadline belongs to its step: the next one has none unless it sets its own.
    operation: { ...withoutDeadline(operation), ...operationChanges, step, stepStartedAt: input.now },
  };
}

function withoutDeadline(operation: Operation): Operation {
  // Both belong to their step: the deadline to electing or reinstating, the list to promoting.
  const { deadline, promoteWith, ...rest } = operation;
  void deadline;
  void promoteWith;
  return rest;
}

/** The promoting step for `target`, with the list its promotion sets saved before it runs. */
function promotingStep(
  input: DecideInput,
  operation: Operation,
  target: string,
  changes: Partial<FailoverState> = {},
  operationChanges: Partial<Operation> = {},
): FailoverState {
  return withStep(input, operation, 'promoting', changes, {
    ...operationChanges,
    promoteWith: promotionList(input, target),
  });
}

/** The synchronous_standby_names a promotion of `target` sets: every other instance, connected or not. */
function promotionList(input: DecideInput, target: string): string {
  const standbys = input.instances.filter((i) => i.name !== target).map((i) => i.name);
  return desiredSynchronousStandbyNames(input.policy.synchronous, standbys, new Set());
}

/** The electing step, with the deadline after which the old primary is brought back. */
function electingStep(
  input: DecideInput,
  operation: Operation,
  changes: Partial<FailoverState> = {},
  operationChanges: Partial<Operation> = {},
): FailoverState {
  return withStep(input, operation, 'electing', changes, {
    ...operationChanges,
    deadline: input.now + input.policy.electionTimeoutMs,
  });
}

/** The state once an operation is over, with `primary` taking writes. */
function settledOn(input: DecideInput, primary: string): FailoverState {
  return withCommitQuorums(settledState(primary), input.state.commitQuorums);
}

function event(type: EngineEvent['type'], instance: string | undefined, message: string): EngineEvent {
  return instance === undefined ? { type, message } : { type, instance, message };
}

function startOperation(
  input: DecideInput,
  kind: Operation['kind'],
  step: OperationStep,
  reason: string,
  changes: Partial<FailoverState> = {},
): FailoverState {
  return {
    ...input.state,
    ...changes,
    operation: {
      kind,
      step,
      reason,
      startedAt: input.now,
      stepStartedAt: input.now,
      fenced: [],
      ...(input.lastPrimaryLsn === undefined ? {} : { referenceLsn: input.lastPrimaryLsn }),
    },
  };
}

/** No operation in progress: keep a healthy primary's replicas in line, or detect its failure. */
function decideSettled(input: DecideInput): Decision {
  const { state, now, policy } = input;
  const name = state.currentPrimary;
  const primary = statusOf(input, name);
  if (input.failoverNow !== undefined) {
    return {
      action: { type: 'none' },
      next: startOperation(input, 'failover', 'fencing', input.failoverNow, {
        targetPrimary: name,
        failingSince: state.failingSince ?? now,
      }),
      events: [event('failover-started', name, input.failoverNow)],
    };
  }
  if (isPrimary(primary)) {
    const { action: maintain, commitQuorums } = maintainAction(input, primary);
    const healthy = withCommitQuorums(settledState(name), commitQuorums);
    const wanted = input.desiredPrimary;
    if (wanted === undefined || wanted === name) return { action: maintain, next: healthy, events: [] };
    const problem = switchoverProblem(input, primary, wanted);
    if (problem) return { action: maintain, next: healthy, events: [], refusal: problem };
    return {
      action: { type: 'none' },
      next: startOperation(input, 'switchover', 'quiescing', `switchover to ${wanted} requested`, {
        ...healthy,
        targetPrimary: wanted,
      }),
      events: [event('switchover-started', wanted, `switchover from ${name} to ${wanted}`)],
    };
  }

  if (!primary.reachable && primary.sqlState !== undefined) {
    // It answered, with an error (too many clients, authentication failed, starting up, shutting
    // down): alive, refusing or busy, and a failover would fence a live primary (ADR 0207). The
    // failing clock is kept, not reset: a crash-looping primary (down, starting up, down) is not
    // held alive by its moments of starting up.
    return {
      action: { type: 'none' },
      next: state,
      events: [],
      refusal: {
        code: 'primary-refusing',
        reason: `the primary ${name} answers but refuses the operator (${primary.error}; SQLSTATE ${primary.sqlState}): it is alive, so it is not failed over`,
      },
    };
  }
  const why = primary.reachable ? 'not accepting writes (in recovery)' : `unreachable (${primary.error})`;
  const failingSince = state.failingSince ?? now;
  const events =
    state.failingSince === undefined ? [event('primary-failing', name, `primary ${name} is ${why}`)] : [];
  const failingFor = now - failingSince;
  if (failingFor < policy.failoverDelayMs) {
    return {
      action: { type: 'wait', retryAfterMs: policy.failoverDelayMs - failingFor },
      next: { ...state, failingSince },
      events,
    };
  }
  const reason = `primary ${name} has been ${why} for ${failingFor} ms`;
  return {
    action: { type: 'none' },
    next: startOperation(input, 'failover', 'fencing', reason, { failingSince, targetPrimary: name }),
    events: [...events, event('failover-started', name, reason)],
  };
}

function maintainAction(
  input: DecideInput,
  primary: PrimaryStatus,
): { action: Action; commitQuorums: CommitQuorumRecord | undefined } {
  const self = endpointOf(input, primary.name);
  const repoint = input.observed
    .filter(isReplica)
    .filter((s) => {
      const r = s.walReceiver;
      return !(r?.status === 'streaming' && r.senderHost === self?.host && r.senderPort === self?.port);
    })
    .map((s) => s.name);
  const sync = input.policy.synchronous;
  let synchronousStandbyNames: string | undefined;
  let commitQuorums: CommitQuorumRecord | undefined;
  if (sync) {
    const standbys = input.instances.filter((i) => i.name !== primary.name).map((i) => i.name);
    const streaming = new Set(
      primary.standbys.filter((s) => s.state === 'streaming').map((s) => s.applicationName),
    );
    const desired = desiredSynchronousStandbyNames(sync, standbys, streaming);
    let mayApply = true;
    if (sync.dataDurability === 'required') {
      // A list the primary is asked to run is on record (saved) first: see commit-quorums.ts.
      const observed = observeCommitQuorums(
        input.state.commitQuorums,
        primary,
        parseCommitQuorum(desired),
        input.now,
        input.policy.reloadSettleMs,
      );
      commitQuorums = observed.record;
      mayApply = observed.mayApply;
    }
    // Also when only the configuration files differ (an ALTER SYSTEM whose reload never came):
    // the next reload must not run a list nobody wants.
    const configured = primary.configuredSynchronousStandbyNames ?? primary.synchronousStandbyNames;
    if ((desired !== primary.synchronousStandbyNames || desired !== configured) && mayApply) {
      synchronousStandbyNames = desired;
    }
  }
  const dropSlots = straySlots(
    primary.slots ?? [],
    input.instances.map((i) => i.name),
  );
  const slots = primary.slots;
  const createSlots = slots
    ? input.observed
        .filter(isReplica)
        .map((s) => s.name)
        .filter((name) => !slots.some((slot) => slot.name === slotName(name)))
    : [];
  const action: Action = {
    type: 'maintain',
    primary: primary.name,
    repoint,
    ...(synchronousStandbyNames === undefined ? {} : { synchronousStandbyNames }),
    ...(dropSlots.length === 0 ? {} : { dropSlots }),
    ...(createSlots.length === 0 ? {} : { createSlots }),
    // Only a switchover's quiesce sets it (users may not: it is an operator-owned parameter), so
    // outside one it is a quiesce whose undo never took; asked again on every probe until it holds.
    ...(primary.readOnly ? { giveWritesBack: true as const } : {}),
  };
  return { action, commitQuorums };
}

function withCommitQuorums(state: FailoverState, record: CommitQuorumRecord | undefined): FailoverState {
  return record === undefined ? state : { ...state, commitQuorums: record };
}

/** Why a switchover to `target` would not be safe now, or undefined. */
function switchoverProblem(
  input: DecideInput,
  primary: PrimaryStatus,
  target: string,
): { code: RefusalCode; reason: string } | undefined {
  if (!endpointOf(input, target)) {
    return { code: 'unknown-instance', reason: `'${target}' is not an instance of this cluster` };
  }
  const status = statusOf(input, target);
  if (!status.reachable) {
    return { code: 'target-unreachable', reason: `${target} is unreachable (${status.error})` };
  }
  if (status.role !== 'replica') {
    return { code: 'target-not-replica', reason: `${target} is not a replica: it accepts writes` };
  }
  if (status.walReceiver?.status !== 'streaming') {
    return {
      code: 'target-not-streaming',
      reason: `${target} is not streaming from ${primary.name} (WAL receiver: ${status.walReceiver?.status ?? 'not running'})`,
    };
  }
  const replayed = status.replayLsn ?? 0n;
  const lag = primary.currentLsn - replayed;
  const bound = input.policy.maxLagBytes;
  if (lag > bound) {
    return {
      code: 'target-lagging',
      reason: `${target} has replayed ${formatLsn(replayed)}, ${lag} bytes behind ${primary.name} at ${formatLsn(primary.currentLsn)} (bound ${bound} bytes)`,
    };
  }
  return undefined;
}

/** The primary went away in the middle of a switchover: it becomes a failover from its fencing. */
function primaryLostDuringSwitchover(input: DecideInput, operation: Operation, why: string): Decision {
  const name = input.state.currentPrimary;
  const reason = `the primary ${name} ${why} during the switchover`;
  return {
    action: { type: 'none' },
    next: withStep(input, { ...operation, kind: 'failover', reason }, 'fencing', {
      targetPrimary: name,
      failingSince: input.now,
    }),
    events: [event('failover-started', name, reason)],
  };
}

function decideQuiescing(input: DecideInput, operation: Operation): Decision {
  const name = input.state.currentPrimary;
  const primary = statusOf(input, name);
  if (!isPrimary(primary)) {
    return primaryLostDuringSwitchover(
      input,
      operation,
      primary.reachable ? 'stopped taking writes' : 'became unreachable',
    );
  }
  const giveBack = settledOn(input, name);
  return {
    action: { type: 'quiesce', instance: name },
    next: withStep(input, operation, 'catching-up'),
    onFailure: {
      code: 'demotion-failed',
      reason: (cause) => `could not stop writes on ${name}: ${cause}; switchover abandoned`,
      next: giveBack,
      action: { type: 'undo-quiesce', instance: name },
    },
    events: [],
  };
}

function decideCatchingUp(input: DecideInput, operation: Operation): Decision {
  const name = input.state.currentPrimary;
  const targetName = input.state.targetPrimary;
  const primary = statusOf(input, name);
  if (!primary.reachable) return primaryLostDuringSwitchover(input, operation, 'became unreachable');
  // A quiesced primary is still out of recovery (read-only by default only), so it reports its LSN.
  const last: Lsn | undefined = isPrimary(primary) ? primary.currentLsn : undefined;
  const target = statusOf(input, targetName);
  if (
    last !== undefined &&
    isReplica(target) &&
    target.receivedLsn !== undefined &&
    target.receivedLsn >= last
  ) {
    return {
      action: { type: 'none' },
      next: withStep(input, operation, 'stopping', {}, { quiescedLsn: last }),
      events: [],
    };
  }
  if (input.now - operation.stepStartedAt > input.policy.switchoverCatchUpTimeoutMs) {
    const reason =
      last === undefined
        ? `${name} stopped reporting its WAL position; ${name} stays primary`
        : `${targetName} did not receive ${name}'s WAL up to ${formatLsn(last)} in time; ${name} stays primary`;
    return {
      action: { type: 'undo-quiesce', instance: name },
      next: settledOn(input, name),
      refusal: { code: 'target-did-not-catch-up', reason },
      events: [],
    };
  }
  return { action: { type: 'wait', retryAfterMs: 50 }, next: input.state, events: [] };
}

function decideStopping(input: DecideInput, operation: Operation): Decision {
  const name = input.state.currentPrimary;
  return {
    action: { type: 'stop', instance: name, lastLsn: operation.quiescedLsn },
    next: promotingStep(
      input,
      operation,
      input.state.targetPrimary,
      {},
      { fenced: addName(operation.fenced, name) },
    ),
    onFailure: {
      code: 'demotion-failed',
      reason: (cause) => `could not stop ${name} cleanly: ${cause}; nothing promoted`,
    },
    events: [],
  };
}

function decideFencing(input: DecideInput, operation: Operation): Decision {
  const name = input.state.currentPrimary;
  return {
    action: { type: 'fence', instance: name },
    next: electingStep(input, operation, {}, { fenced: addName(operation.fenced, name) }),
    onFailure: {
      code: 'fence-failed',
      reason: (cause) => `could not fence ${name}: ${cause}; nothing promoted`,
    },
    events: [],
  };
}

function decideElecting(input: DecideInput, operation: Operation): Decision {
  const excluded = new Set([input.state.currentPrimary, ...operation.fenced]);
  const others = input.instances.filter((i) => !excluded.has(i.name)).map((i) => statusOf(input, i.name));
  // A receiver that has heard nothing for longer than the standbys' timeout lets go of its sender
  // soon, or is stuck: it is not receiving from a live old primary (seen once on a loaded node, a
  // receiver reading `streaming` minutes after its last message, which held a failover forever).
  const streaming = others.some(
    (s) =>
      isReplica(s) &&
      s.walReceiver?.status === 'streaming' &&
      (s.walReceiver.silentForMs ?? 0) < input.policy.silentReceiverMs,
  );
  if (streaming) {
    if (input.now - operation.stepStartedAt <= input.policy.walReceiverStopTimeoutMs) {
      return { action: { type: 'wait', retryAfterMs: 100 }, next: input.state, events: [] };
    }
    // Fencing did not take effect: fence again before anything is promoted.
    return {
      action: { type: 'none' },
      next: withStep(input, operation, 'fencing'),
      refusal: {
        code: 'old-primary-still-streaming',
        reason: `a replica still streams WAL ${input.policy.walReceiverStopTimeoutMs} ms after ${input.state.currentPrimary} was fenced; fencing did not take effect, nothing promoted`,
      },
      events: [],
    };
  }
  const choice = chooseFailoverCandidate(others, candidateRules(input, operation));
  const verdictLine = choice.verdicts
    .map((v) => `${v.name}: ${v.eligible ? 'eligible' : 'not eligible'}, ${v.reason}`)
    .join('; ');
  const events = [event('candidates', undefined, verdictLine)];
  if (!choice.ok) return noEligibleReplica(input, operation, choice.reason, events, choice.verdicts);
  return {
    action: { type: 'none' },
    next: promotingStep(input, operation, choice.candidate.name, { targetPrimary: choice.candidate.name }),
    events,
    verdicts: choice.verdicts,
  };
}

/**
 * No replica can be promoted. Until the step's deadline a replica may yet become eligible (one
 * replaying what it has received, one restarting); after it the old primary is brought back:
 * nothing was promoted, so it holds every commit any replica has (ADR 0206).
 */
function noEligibleReplica(
  input: DecideInput,
  operation: Operation,
  why: string,
  events: readonly EngineEvent[],
  verdicts: readonly CandidateVerdict[],
): Decision {
  const old = input.state.currentPrimary;
  const deadline = operation.deadline ?? operation.stepStartedAt + input.policy.electionTimeoutMs;
  if (input.now < deadline) {
    const reason = `${why}; ${old} (the old primary: nothing was promoted, so its data is the newest) is brought back at ${new Date(deadline).toISOString()} unless a replica becomes eligible first`;
    return {
      action: { type: 'none' },
      next: input.state,
      refusal: { code: 'no-eligible-replica', reason },
      events,
      verdicts,
    };
  }
  const writer = input.observed.find(isPrimary);
  if (writer) return secondWriter(input, writer.name, old);
  return {
    action: { type: 'none' },
    next: withStep(
      input,
      operation,
      'reinstating',
      { targetPrimary: old },
      { deadline: input.now + input.policy.reinstateTimeoutMs },
    ),
    events: [
      ...events,
      event(
        'reinstating',
        old,
        `${why}; bringing ${old} back as the primary: nothing was promoted, so its data is the newest`,
      ),
    ],
    verdicts,
  };
}

function secondWriter(input: DecideInput, writer: string, target: string): Decision {
  return {
    action: { type: 'none' },
    next: input.state,
    refusal: {
      code: 'second-primary',
      reason: `${writer} already accepts writes; refusing to make ${target} primary next to it`,
    },
    events: [],
  };
}

/**
 * The old primary is coming back (the controller creates its pod as a primary). Once it takes
 * writes, they are routed to it. Past the deadline a replica eligible by then is promoted instead,
 * after fencing the old primary again; with none, the old primary is waited for.
 */
function decideReinstating(input: DecideInput, operation: Operation): Decision {
  const old = input.state.currentPrimary;
  const writer = input.observed.find((s) => isPrimary(s) && s.name !== old);
  if (writer) return secondWriter(input, writer.name, old);
  if (isPrimary(statusOf(input, old))) {
    return {
      action: { type: 'none' },
      next: withStep(input, operation, 'routing', { targetPrimary: old }),
      events: [],
    };
  }
  const deadline = operation.deadline ?? operation.stepStartedAt + input.policy.reinstateTimeoutMs;
  if (input.now >= deadline) {
    const excluded = new Set([old, ...operation.fenced]);
    const others = input.instances.filter((i) => !excluded.has(i.name)).map((i) => statusOf(input, i.name));
    const choice = chooseFailoverCandidate(others, candidateRules(input, operation));
    if (choice.ok) {
      return {
        action: { type: 'none' },
        next: withStep(input, operation, 'fencing', { targetPrimary: old }),
        events: [
          event(
            'warning',
            old,
            `${old} did not come back as the primary by ${new Date(deadline).toISOString()}; fencing it again, ${choice.candidate.name} is eligible now`,
          ),
        ],
      };
    }
  }
  return { action: { type: 'wait', retryAfterMs: 500 }, next: input.state, events: [], yields: true };
}

function decidePromoting(input: DecideInput, operation: Operation): Decision {
  const targetName = input.state.targetPrimary;
  const target = statusOf(input, targetName);
  const writer = input.observed.find((s) => isPrimary(s) && s.name !== targetName);
  if (writer) return secondWriter(input, writer.name, targetName);
  // Promoted already (by the engine that stopped before it could record it): never again.
  if (isPrimary(target))
    return { action: { type: 'none' }, next: withStep(input, operation, 'routing'), events: [] };
  if (!target.reachable) {
    // It may have been promoted and then lost: fence it too, so it can never take a write, and
    // choose among the others.
    return {
      action: { type: 'fence', instance: targetName },
      next: electingStep(
        input,
        operation,
        { targetPrimary: input.state.currentPrimary },
        { fenced: addName(operation.fenced, targetName) },
      ),
      onFailure: {
        code: 'fence-failed',
        reason: (cause) => `could not fence ${targetName}: ${cause}; nothing promoted`,
      },
      events: [
        event(
          'warning',
          targetName,
          `${targetName} became unreachable before its promotion; fencing it and choosing again`,
        ),
      ],
    };
  }
  const stopped = input.state.failingSince;
  const bound = input.policy.isolatedPrimaryStopsWithinMs;
  if (operation.kind === 'failover' && stopped !== undefined && input.now < stopped + bound) {
    // Not before a cut-off primary has stopped itself (see FailoverPolicy).
    return {
      action: { type: 'wait', retryAfterMs: stopped + bound - input.now },
      next: input.state,
      events: [],
    };
  }
  const promoteWith = operation.promoteWith ?? promotionList(input, targetName);
  return {
    action: {
      type: 'promote',
      instance: targetName,
      // Set before promotion so the first commit on the new primary already waits for standbys;
      // the routing step records it as a list commits count on.
      synchronousStandbyNames: promoteWith,
    },
    next: withStep(input, operation, 'routing', {}, { promoteWith }),
    onFailure: { code: 'promotion-failed', reason: (cause) => cause },
    events: [],
  };
}

function decideRouting(input: DecideInput, operation: Operation): Decision {
  const primary = input.state.targetPrimary;
  const excluded = new Set([primary, input.state.currentPrimary, ...operation.fenced]);
  // A promoted primary holds every commit acknowledged before, and acknowledges its own under the
  // list its promotion set; an old primary brought back still runs its own, so its record stays.
  let state = input.state;
  if (primary !== state.currentPrimary) {
    const { commitQuorums, ...rest } = state;
    void commitQuorums; // the old primary's: replaced
    const required = input.policy.synchronous?.dataDurability === 'required';
    // What the promotion set, and what the new primary is seen running or configured with if
    // that differs (an operation an older operator started did not save the list).
    const target = statusOf(input, primary);
    const seen = isPrimary(target)
      ? [target.synchronousStandbyNames, target.configuredSynchronousStandbyNames ?? '']
      : [];
    const lists = required
      ? [operation.promoteWith ?? promotionList(input, primary), ...seen].map(parseCommitQuorum)
      : [];
    const quorums = lists.filter(
      (q, i): q is CommitQuorum => q !== undefined && !lists.slice(0, i).some((p) => sameQuorum(p, q)),
    );
    state = quorums.length > 0 ? { ...rest, commitQuorums: { quorums } } : rest;
  }
  return {
    action: {
      type: 'route',
      primary,
      slotsFor: input.instances.filter((i) => i.name !== primary).map((i) => i.name),
      repoint: input.observed.filter((s) => isReplica(s) && !excluded.has(s.name)).map((s) => s.name),
    },
    next: withStep({ ...input, state }, operation, 'rejoining', { currentPrimary: primary }),
    onFailure: {
      code: 'routing-failed',
      reason: (cause) => `could not route writes to ${primary}: ${cause}`,
    },
    events: [],
  };
}

function decideRejoining(input: DecideInput, operation: Operation): Decision {
  const primary = input.state.currentPrimary;
  return {
    action: { type: 'rejoin', instances: operation.fenced.filter((n) => n !== primary), primary },
    next: settledOn(input, primary),
    events: [],
    completes: true,
  };
}

/**
 * Under dataDurability `required`, commits waited for the lists on record (commit-quorums.ts): the
 * ones the old primary ran or was asked to run. With none on record (a record kept since before
 * this operator version), the spec's: every instance but the old primary, `number` of them.
 */
function candidateRules(input: DecideInput, operation: Operation): CandidateRules {
  const { synchronous, maxLagBytes } = input.policy;
  const rules = { lastKnownPrimaryLsn: operation.referenceLsn, maxLagBytes };
  if (synchronous?.dataDurability !== 'required') return rules;
  const recorded = input.state.commitQuorums?.quorums ?? [];
  if (recorded.length > 0) return { ...rules, quorums: recorded };
  const standbys = input.instances
    .filter((i) => i.name !== input.state.currentPrimary)
    .map((i) => i.name)
    .sort();
  return { ...rules, quorums: [{ number: synchronous.number, standbys }] };
}

function addName(names: readonly string[], name: string): readonly string[] {
  return names.includes(name) ? names : [...names, name];
}
