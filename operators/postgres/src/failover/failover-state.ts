// What the failover engine must remember between steps, and nothing more. The operator keeps it in
// the PostgreSQLCluster's status; the tests keep it in memory. Each step reads it, acts, and writes
// the next one, so an engine started afresh at any moment continues where the last one stopped.
import type { Lsn } from '../instance/lsn.ts';
import { sameRecord, type CommitQuorumRecord } from './commit-quorums.ts';

/** Steps of a failover or switchover, in the order they run (see decide.ts for each one's work). */
export type OperationStep =
  | 'quiescing'
  | 'catching-up'
  | 'stopping'
  | 'fencing'
  | 'electing'
  /** No replica could be elected: the old primary comes back as the primary (ADR 0206). */
  | 'reinstating'
  | 'promoting'
  | 'routing'
  | 'rejoining';

/** A failover or switchover in progress. */
export interface Operation {
  readonly kind: 'failover' | 'switchover';
  readonly step: OperationStep;
  /** Why it started, for events and status. */
  readonly reason: string;
  /** Milliseconds since the epoch. */
  readonly startedAt: number;
  /** When the current step started: the clock of a step's timeout survives a restart. */
  readonly stepStartedAt: number;
  /** Instances kept from taking writes; each rejoins as a replica when the operation ends. */
  readonly fenced: readonly string[];
  /**
   * The old primary's last WAL position seen before the operation started: no replica further
   * behind it than the lag bound is promoted, even when the most advanced replica is unreachable.
   */
  readonly referenceLsn?: Lsn;
  /** Switchover: the old primary's WAL position once it took no more writes. */
  readonly quiescedLsn?: Lsn;
  /**
   * When the current step stops waiting (ms since the epoch): electing brings the old primary
   * back, reinstating lets an eligible replica replace it. Saved, so a restart keeps the clock.
   */
  readonly deadline?: number;
  /**
   * promoting: the synchronous_standby_names the promotion sets, chosen (and saved) with the
   * target, so that the list the routing step records is the one the new primary runs.
   */
  readonly promoteWith?: string;
}

export interface FailoverState {
  /** The instance writes are routed to; during an operation, the one being replaced until routing. */
  readonly currentPrimary: string;
  /** The instance being promoted; equal to currentPrimary when none is. */
  readonly targetPrimary: string;
  /** Since when (ms since the epoch) the primary has been failing; undefined while it is healthy. */
  readonly failingSince?: number;
  readonly operation?: Operation;
  /**
   * Under dataDurability `required`: the synchronous standby lists commits may have been
   * acknowledged under (commit-quorums.ts). A failover counts them, not the spec's list.
   */
  readonly commitQuorums?: CommitQuorumRecord;
}

/** The state of a cluster whose primary is `primary` and nothing is in progress. */
export function settledState(primary: string): FailoverState {
  return { currentPrimary: primary, targetPrimary: primary };
}

/**
 * `state` with its failing clock stopped: a primary silent on purpose (fenced on request) is not
 * failing, and a clock a probe started just before is not counted afterwards.
 */
export function withoutFailingClock(state: FailoverState): FailoverState {
  const { failingSince, ...rest } = state;
  return failingSince === undefined ? state : rest;
}

/** Where the engine keeps its state between steps. `save` resolves once the state is durable. */
export interface FailoverStateStore {
  load(): Promise<FailoverState>;
  /**
   * `completed`: the operation this save ends, counted in the same write, so that a process
   * stopped right after the last step's save cannot lose the count (nor a new one count it twice).
   */
  save(state: FailoverState, completed?: Operation['kind']): Promise<void>;
}

/** A store in memory: the state lives as long as the store object (tests, the benchmark). */
export function memoryStateStore(initial: FailoverState): FailoverStateStore & { state: FailoverState } {
  const store = {
    state: initial,
    load: async () => store.state,
    save: async (state: FailoverState) => {
      store.state = state;
    },
  };
  return store;
}

/** True when two states are the same (so an unchanged step writes nothing). */
export function sameState(a: FailoverState, b: FailoverState): boolean {
  return (
    a.currentPrimary === b.currentPrimary &&
    a.targetPrimary === b.targetPrimary &&
    a.failingSince === b.failingSince &&
    sameOperation(a.operation, b.operation) &&
    sameRecord(a.commitQuorums, b.commitQuorums)
  );
}

function sameOperation(a: Operation | undefined, b: Operation | undefined): boolean {
  if (!a || !b) return a === b;
  return (
    a.kind === b.kind &&
    a.step === b.step &&
    a.reason === b.reason &&
    a.startedAt === b.startedAt &&
    a.stepStartedAt === b.stepStartedAt &&
    a.quiescedLsn === b.quiescedLsn &&
    a.deadline === b.deadline &&
    a.promoteWith === b.promoteWith &&
    a.referenceLsn === b.referenceLsn &&
    a.fenced.length === b.fenced.length &&
    a.fenced.every((name, i) => b.fenced[i] === name)
  );
}
