// What the failover engine reports: events as it goes, and for each failover or switchover either
// a promotion or a refusal with its reason.
import type { CandidateVerdict } from './candidate.ts';

/** Something the engine did or saw, for logs, Kubernetes Events and tests. */
export interface EngineEvent {
  readonly type:
    | 'primary-failing'
    | 'failover-started'
    | 'switchover-started'
    | 'fenced'
    | 'candidates'
    | 'promoted'
    /** No replica could be elected: the old primary is being brought back. */
    | 'reinstating'
    | 'repointed'
    | 'routed'
    | 'rejoin-requested'
    | 'synchronous-standbys'
    /** Replication slots of instances that scaling removed were dropped on the primary. */
    | 'slots-dropped'
    /** Slots running replicas lacked on the primary were made (a failover's routing failed to). */
    | 'slots-created'
    /** A primary left read-only by a switchover whose undo failed takes writes again. */
    | 'writes-restored'
    /**
     * A primary given writes back is still read-only: default_transaction_read_only comes from a
     * role or database setting the operator does not own. Reported once per distinct message.
     */
    | 'still-read-only'
    /** One step of an operation done: its action and how long it took (where the seconds go). */
    | 'step'
    | 'refused'
    | 'warning';
  readonly instance?: string;
  readonly message: string;
}

export type RefusalCode =
  | 'busy'
  | 'unknown-instance'
  | 'already-primary'
  | 'primary-unreachable'
  /** The primary answers with an error: alive, so not failed over. */
  | 'primary-refusing'
  | 'target-unreachable'
  | 'target-not-replica'
  | 'target-not-streaming'
  | 'target-lagging'
  | 'target-did-not-catch-up'
  | 'demotion-failed'
  | 'fence-failed'
  | 'old-primary-still-streaming'
  | 'no-eligible-replica'
  | 'second-primary'
  | 'promotion-failed'
  | 'routing-failed';

/** A promotion that happened. */
export interface Promotion {
  readonly outcome: 'promoted';
  readonly kind: 'failover' | 'switchover';
  readonly oldPrimary: string;
  readonly newPrimary: string;
  readonly timeline: number | undefined;
  readonly verdicts: readonly CandidateVerdict[];
  /** From the start of the operation (before any restart of the engine) to its end. */
  readonly durationMs: number;
  /** 'requested', or why the old primary could not be asked to rejoin. */
  readonly rejoin: string;
}

/** A failover that ended with the old primary taking writes again, no replica having been eligible. */
export interface Reinstatement {
  readonly outcome: 'reinstated';
  readonly kind: 'failover' | 'switchover';
  readonly primary: string;
  readonly timeline: number | undefined;
  readonly durationMs: number;
}

/** A request the engine turned down, or a step it could not take (it is retried on the next probe). */
export interface Refusal {
  readonly outcome: 'refused';
  readonly kind: 'failover' | 'switchover';
  readonly code: RefusalCode;
  readonly reason: string;
}

export type EngineOutcome = Promotion | Reinstatement | Refusal;
