// etcd's strict reconfiguration check refuses a member add ("unhealthy cluster") unless the member
// that receives it has seen a quorum of voters active in its rafthttp transport for the last 5 s
// (HealthInterval). rafthttp marks a peer active when a stream (re)connects or a pipeline send
// succeeds, and inactive when any send fails; a pipeline send that fails after the peer's streams
// came back leaves the peer inactive while those streams stay up, and then that member refuses every
// add for good. The operator sends adds to the leader, so it moves leadership off a leader that keeps
// refusing while every voter answers (docs/adr/0312-etcd-leadership-moved-off-a-stale-peer-view.md).
// This file only decides when; membership-changes.ts does the move.

/**
 * How long a leader may refuse adds as "unhealthy cluster", while every voter answers, before
 * leadership moves: twice etcd's HealthInterval, so a voter that reconnected just before the first
 * refusal has had time to count as connected, and an ordinary restart never moves leadership.
 */
export const settlingPatienceMs = 10_000;

/** A run of refusals whose last one is older than this is over; the next refusal starts a new run. */
const forgetAfterMs = 6 * settlingPatienceMs;

interface RefusalRun {
  leaderId: string;
  /**
   * When the current leader was first seen refusing in this run, since a voter last went silent;
   * undefined: the next refusal starts the patience (see voterSilent).
   */
  since: number | undefined;
  lastSeen: number;
  /** Leaders moved away from in this run: never again, so a run moves leadership at most voters-1 times. */
  readonly movedFrom: Set<string>;
}

/** What to do about one "unhealthy cluster" refusal from the leader. */
export interface SettlingVerdict {
  readonly moveLeadership: boolean;
  /** How long this leader has been refusing, in ms. */
  readonly refusingForMs: number;
  /** Members leadership was moved away from in this run (not to be handed leadership again). */
  readonly movedFrom: ReadonlySet<string>;
}

/**
 * Remembers, per cluster, since when its leader has refused adds as "unhealthy cluster" while every
 * voter answered. Kept in memory only: after an operator restart the patience starts again, which
 * costs one more patience period and nothing else.
 */
export class SettlingRefusals {
  private readonly runs = new Map<string, RefusalRun>();
  private readonly now: () => number;
  private readonly patienceMs: number;

  constructor(now: () => number = Date.now, patienceMs = settlingPatienceMs) {
    this.now = now;
    this.patienceMs = patienceMs;
  }

  /** Records a refusal by `leaderId` of cluster `clusterId` (every voter answering) and decides. */
  refused(clusterId: string, leaderId: string): SettlingVerdict {
    const now = this.now();
    this.forgetOver(now);
    let run = this.runs.get(clusterId);
    if (!run) {
      run = { leaderId, since: now, lastSeen: now, movedFrom: new Set() };
      this.runs.set(clusterId, run);
    }
    if (run.leaderId !== leaderId || run.since === undefined || now - run.lastSeen > this.patienceMs) {
      // A new leader has its own view of its peers: it gets its own patience. So does a leader
      // whose peers' streams may be new since a voter went silent, or since its last refusal
      // long ago (no add was tried meanwhile, so nothing says the refusals went on; a refused add
      // is retried every few seconds).
      run.leaderId = leaderId;
      run.since = now;
    }
    run.lastSeen = now;
    const refusingForMs = now - run.since;
    return {
      moveLeadership: refusingForMs >= this.patienceMs && !run.movedFrom.has(leaderId),
      refusingForMs,
      movedFrom: run.movedFrom,
    };
  }

  /**
   * Records that a voter of cluster `clusterId` did not answer the operator. A refusal then is etcd
   * being right, and once the voter is back its streams are new, so the leader is right to refuse
   * for another HealthInterval: the patience starts again at the next refusal (every voter
   * answering), or a restart within the patience would move leadership at once. The leaders moved
   * away from stay remembered, so the run's moves stay bounded.
   */
  voterSilent(clusterId: string): void {
    const run = this.runs.get(clusterId);
    if (run) run.since = undefined;
  }

  /** Records that leadership moved away from `leaderId`. */
  movedAway(clusterId: string, leaderId: string): void {
    this.runs.get(clusterId)?.movedFrom.add(leaderId);
  }

  /** How many clusters have a run remembered. */
  trackedClusters(): number {
    return this.runs.size;
  }

  /**
   * Drops the runs that are over, every cluster's: a cluster deleted, scaled back or restored under
   * a new cluster ID in the middle of a run never gets the add that would end it.
   */
  private forgetOver(now: number): void {
    for (const [clusterId, run] of this.runs) {
      if (now - run.lastSeen > forgetAfterMs) this.runs.delete(clusterId);
    }
  }

  /** Ends the run of cluster `clusterId`: an add went through. */
  settled(clusterId: string): void {
    this.runs.delete(clusterId);
  }
}

/** The operator's memory of refusals, shared by every reconcile of this process. */
export const settlingRefusals = new SettlingRefusals();
