/** Why the engine refused or failed a step; stable codes a controller can turn into conditions. */
export type EtcdEngineReason =
  | 'NoQuorum'
  | 'WouldLoseQuorum'
  | 'ClusterSettling'
  | 'TwoMemberRemoval'
  | 'LearnerAlreadyExists'
  | 'LearnerNotInSync'
  | 'LearnerNotStarted'
  | 'MemberNotFound'
  | 'PeerUrlConflict'
  | 'NoHealthyMember'
  | 'SnapshotStreamFailed'
  | 'SnapshotHashMismatch'
  | 'SnapshotRevisionUnreadable'
  | 'SnapshotMalformed'
  | 'RestoreFailed'
  | 'MaintenanceFailed'
  | 'Unreachable';

/** An engine error as a value: which step, which member, why, and the underlying cause. */
export class EtcdEngineError extends Error {
  override readonly name = 'EtcdEngineError';
  readonly step: string;
  readonly reason: EtcdEngineReason;
  readonly member: string | undefined;

  constructor(
    step: string,
    reason: EtcdEngineReason,
    message: string,
    details: { member?: string; cause?: unknown } = {},
  ) {
    super(`${step}${details.member ? ` (member ${details.member})` : ''}: ${message}`, {
      cause: details.cause,
    });
    this.step = step;
    this.reason = reason;
    this.member = details.member;
  }
}

/**
 * Refusals that pass by themselves: etcd refuses membership changes until every voter has been
 * connected for a few seconds (its "unhealthy cluster" answer), a learner needs time to catch up, a
 * leader may change under a call. A reconcile loop waits and tries again; anything else needs a human.
 */
export function isTransient(error: unknown): boolean {
  return (
    error instanceof EtcdEngineError &&
    (error.reason === 'ClusterSettling' ||
      error.reason === 'LearnerNotInSync' ||
      error.reason === 'Unreachable')
  );
}

/** The message of any thrown value, for error text. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
