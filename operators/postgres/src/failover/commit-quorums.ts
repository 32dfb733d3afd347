// Which synchronous standby lists acknowledged commits may count on, under dataDurability
// `required`. A failover must find a standby holding every acknowledged commit, and that depends on
// the list the primary ran when each commit was acknowledged, not on the list the spec asks for
// now: after a scale-down, a raised synchronous.number or a replaced instance, the two differ until
// the standbys of the new list have caught up. So the engine keeps every list the primary may have
// acknowledged under, adds a list to the record before the primary is asked to run it, and drops
// the older ones only once the newest has been running long enough for every PostgreSQL process to
// have applied it and `number` of its standbys have flushed the WAL written by then: any commit
// acknowledged under an older list is below that position, so a quorum of the newest holds it.
import type { Lsn } from '../instance/lsn.ts';
import type { PrimaryStatus } from '../instance/observe.ts';

/** `ANY number (standbys)`: a commit was acknowledged once `number` of `standbys` had flushed it. */
export interface CommitQuorum {
  readonly number: number;
  /** Sorted. */
  readonly standbys: readonly string[];
}

export interface CommitQuorumRecord {
  /** Every list an acknowledged commit may count on; the last is the newest the primary ran. */
  readonly quorums: readonly CommitQuorum[];
  /** When the primary was first seen running the newest list (ms since the epoch). */
  readonly newestSeenAt?: number;
  /**
   * The primary's WAL position once the newest list had run for the settle time: every commit
   * acknowledged under an older list is below it.
   */
  readonly newestFromLsn?: Lsn;
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
  return (
    a.newestSeenAt === b.newestSeenAt &&
    a.newestFromLsn === b.newestFromLsn &&
    a.quorums.length === b.quorums.length &&
    a.quorums.every((q, i) => sameQuorum(q, b.quorums[i]))
  );
}

const contains = (record: CommitQuorumRecord, quorum: CommitQuorum): boolean =>
  record.quorums.some((q) => sameQuorum(q, quorum));

/** `quorum` as the newest list, first seen now: its settle clock starts over. */
function withNewest(record: CommitQuorumRecord, quorum: CommitQuorum): CommitQuorumRecord {
  return { quorums: [...record.quorums.filter((q) => !sameQuorum(q, quorum)), quorum] };
}

export interface QuorumObservation {
  /** The record once this probe of a healthy primary is taken into account. */
  readonly record: CommitQuorumRecord;
  /** The wanted list is on record (saved before this probe), so the primary may be asked to run it. */
  readonly mayApply: boolean;
}

/**
 * One probe of a healthy primary: what it runs (`primary.synchronousStandbyNames`) and the list
 * the spec wants (`wanted`). `settleMs`: how long after a reload every PostgreSQL process has
 * applied it (each process rereads the configuration on its own, within milliseconds).
 */
export function observeCommitQuorums(
  record: CommitQuorumRecord | undefined,
  primary: Pick<PrimaryStatus, 'synchronousStandbyNames' | 'currentLsn' | 'standbys'>,
  wanted: CommitQuorum | undefined,
  now: number,
  settleMs: number,
): QuorumObservation {
  let next: CommitQuorumRecord = record ?? { quorums: [] };
  const running = parseCommitQuorum(primary.synchronousStandbyNames);
  if (running) {
    const newest = next.quorums.at(-1);
    if (!sameQuorum(newest, running)) next = withNewest(next, running);
    next = settle(next, running, primary, now, settleMs);
  }
  if (!wanted || sameQuorum(wanted, running)) return { record: next, mayApply: false };
  if (contains(next, wanted) && record && contains(record, wanted)) return { record: next, mayApply: true };
  return { record: contains(next, wanted) ? next : { quorums: [...next.quorums, wanted] }, mayApply: false };
}

/** The settle clock of the newest list, run while the primary runs it; older lists dropped once held. */
function settle(
  record: CommitQuorumRecord,
  running: CommitQuorum,
  primary: Pick<PrimaryStatus, 'currentLsn' | 'standbys'>,
  now: number,
  settleMs: number,
): CommitQuorumRecord {
  const seenAt = record.newestSeenAt ?? now;
  let fromLsn = record.newestFromLsn;
  if (fromLsn === undefined && now - seenAt >= settleMs) fromLsn = primary.currentLsn;
  const settled = {
    ...record,
    newestSeenAt: seenAt,
    ...(fromLsn === undefined ? {} : { newestFromLsn: fromLsn }),
  };
  if (fromLsn === undefined || record.quorums.length === 1) return settled;
  const members = new Set(running.standbys);
  const holding = primary.standbys.filter(
    (s) => members.has(s.applicationName) && s.flushLsn !== undefined && s.flushLsn >= fromLsn,
  ).length;
  return holding >= Math.min(running.number, running.standbys.length)
    ? { ...settled, quorums: [running] }
    : settled;
}

/** For refusals and status: `ANY 1 of 2 (pg-1, pg-2)`. */
export function describeQuorum(quorum: CommitQuorum): string {
  return `ANY ${quorum.number} of ${quorum.standbys.length} (${quorum.standbys.join(', ')})`;
}
