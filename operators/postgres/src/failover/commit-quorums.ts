// Which synchronous standby lists acknowledged commits may count on, under dataDurability
// `required`. A failover must find a standby holding every acknowledged commit, and that depends on
// the list the primary ran when each commit was acknowledged, not on the list the spec asks for
// now: after a scale-down, a raised synchronous.number or a replaced instance, the two differ until
// the standbys of the new list have caught up. So the engine keeps every list the primary may have
// acknowledged under or may run on its next reload (what its configuration files say): a list is
// added to the record before the primary is asked to run it, and the others are dropped only once
// the running list has run long enough for every PostgreSQL process to have applied it and
// `number` of its standbys have flushed the WAL written by then: any commit acknowledged under
// another list is below that position, so a quorum of the running list holds it.
import type { Lsn } from '../instance/lsn.ts';
import type { StandbyConnection } from '../instance/observe.ts';

/** `ANY number (standbys)`: a commit was acknowledged once `number` of `standbys` had flushed it. */
export interface CommitQuorum {
  readonly number: number;
  /** Sorted. */
  readonly standbys: readonly string[];
}

export interface CommitQuorumRecord {
  /** Every list an acknowledged commit may count on, or the primary may run on its next reload. */
  readonly quorums: readonly CommitQuorum[];
  /** The list the primary was last seen running, and its settle clock. */
  readonly running?: RunningQuorum;
}

export interface RunningQuorum {
  readonly quorum: CommitQuorum;
  /** When the primary was first seen running it (ms since the epoch). */
  readonly seenAt: number;
  /**
   * The primary's WAL position once it had run the list for the settle time: every commit
   * acknowledged under another list is below it.
   */
  readonly fromLsn?: Lsn;
}

const quorumPattern = /^ANY\s+(\d+)\s*\((.*)\)$/is;

/**
 * The quorum a `synchronous_standby_names` value asks for; undefined for '' (asynchronous) and for
 * forms the operator never writes (it owns the parameter: users cannot set it).
 */
export function parseCommitQuorum(value: string): CommitQuorum | undefined {
  const match = quorumPattern.exec(value.trim());
  if (!match?.[1] || match[2] === undefined) return undefined;
  const standbys = splitNames(match[2]);
  if (!standbys) return undefined;
  return { number: Number(match[1]), standbys: [...standbys].sort() };
}

/** `"a", b, "c""d"` → [a, b, c"d]; undefined when it is not a plain list of names. */
function splitNames(list: string): string[] | undefined {
  const names: string[] = [];
  let rest = list.trim();
  while (rest !== '') {
    const match = /^(?:"((?:[^"]|"")*)"|([^",\s]+))\s*(?:,\s*|$)/.exec(rest);
    if (!match) return undefined;
    names.push(match[1] !== undefined ? match[1].replaceAll('""', '"') : (match[2] ?? ''));
    rest = rest.slice(match[0].length);
  }
  return names;
}

export function sameQuorum(a: CommitQuorum | undefined, b: CommitQuorum | undefined): boolean {
  if (!a || !b) return a === b;
  return (
    a.number === b.number &&
    a.standbys.length === b.standbys.length &&
    a.standbys.every((s, i) => b.standbys[i] === s)
  );
}

export function sameRecord(a: CommitQuorumRecord | undefined, b: CommitQuorumRecord | undefined): boolean {
  if (!a || !b) return a === b;
  const x = a.running;
  const y = b.running;
  const sameRunning =
    !x || !y ? x === y : sameQuorum(x.quorum, y.quorum) && x.seenAt === y.seenAt && x.fromLsn === y.fromLsn;
  return (
    sameRunning &&
    a.quorums.length === b.quorums.length &&
    a.quorums.every((q, i) => sameQuorum(q, b.quorums[i]))
  );
}

const contains = (quorums: readonly CommitQuorum[], quorum: CommitQuorum): boolean =>
  quorums.some((q) => sameQuorum(q, quorum));

const withQuorum = (
  quorums: readonly CommitQuorum[],
  quorum: CommitQuorum | undefined,
): readonly CommitQuorum[] => (!quorum || contains(quorums, quorum) ? quorums : [...quorums, quorum]);

export interface QuorumObservation {
  /** The record once this probe of a healthy primary is taken into account. */
  readonly record: CommitQuorumRecord;
  /** The wanted list is on record (saved before this probe), so the primary may be asked to run it. */
  readonly mayApply: boolean;
}

/** What a probe saw of the primary. */
export interface PrimaryQuorumView {
  /** What it runs (a new session's `synchronous_standby_names`). */
  readonly synchronousStandbyNames: string;
  /** What its configuration files say, which its next reload runs (undefined: not readable). */
  readonly configuredSynchronousStandbyNames?: string | undefined;
  readonly currentLsn: Lsn;
  readonly standbys: readonly StandbyConnection[];
}

/**
 * One probe of a healthy primary and the list the spec wants (`wanted`; undefined: none, i.e.
 * asynchronous). `settleMs`: how long after a reload every PostgreSQL process has applied it.
 */
export function observeCommitQuorums(
  record: CommitQuorumRecord | undefined,
  primary: PrimaryQuorumView,
  wanted: CommitQuorum | undefined,
  now: number,
  settleMs: number,
): QuorumObservation {
  const saved = record?.quorums ?? [];
  const running = parseCommitQuorum(primary.synchronousStandbyNames);
  const configured = parseCommitQuorum(
    primary.configuredSynchronousStandbyNames ?? primary.synchronousStandbyNames,
  );
  let quorums = withQuorum(withQuorum(saved, running), configured);
  let clock: RunningQuorum | undefined;
  if (running) {
    const before = record?.running;
    clock = before && sameQuorum(before.quorum, running) ? before : { quorum: running, seenAt: now };
    if (clock.fromLsn === undefined && now - clock.seenAt >= settleMs) {
      clock = { ...clock, fromLsn: primary.currentLsn };
    }
    if (clock.fromLsn !== undefined && holds(running, primary.standbys, clock.fromLsn)) {
      // Every other list's commits are on a quorum of the running one. Kept: what the next reload
      // runs, and the wanted list already on record (asked for, it may be running any moment).
      const keep = [running, configured, wanted && contains(saved, wanted) ? wanted : undefined];
      quorums = quorums.filter((q) => keep.some((k) => k !== undefined && sameQuorum(k, q)));
    }
  }
  const mayApply = !wanted || contains(saved, wanted);
  if (wanted) quorums = withQuorum(quorums, wanted);
  return { record: { quorums, ...(clock ? { running: clock } : {}) }, mayApply };
}

/** `number` standbys of `quorum` flushed `lsn`. */
function holds(quorum: CommitQuorum, standbys: readonly StandbyConnection[], lsn: Lsn): boolean {
  const members = new Set(quorum.standbys);
  const holding = standbys.filter(
    (s) => members.has(s.applicationName) && s.flushLsn !== undefined && s.flushLsn >= lsn,
  ).length;
  return holding >= Math.min(quorum.number, quorum.standbys.length);
}

/** For refusals and status: `ANY 1 of 2 (pg-1, pg-2)`. */
export function describeQuorum(quorum: CommitQuorum): string {
  return `ANY ${quorum.number} of ${quorum.standbys.length} (${quorum.standbys.join(', ')})`;
}
