import { describe, expect, it } from 'vitest';
import { observeCommitQuorums, parseCommitQuorum, type CommitQuorumRecord } from './commit-quorums.ts';
import type { StandbyConnection } from '../instance/observe.ts';

const flushed = (name: string, flushLsn: bigint): StandbyConnection => ({
  applicationName: name,
  state: 'streaming',
  syncState: 'quorum',
  flushLsn,
  replayLsn: flushLsn,
});

describe('synchronous_standby_names read as a commit quorum', () => {
  it('reads the ANY form the operator writes, quoted or not, names sorted', () => {
    expect(parseCommitQuorum('ANY 1 ("pg-2", "pg-1")')).toEqual({ number: 1, standbys: ['pg-1', 'pg-2'] });
    expect(parseCommitQuorum('any 2 (a, "b""c",d)')).toEqual({ number: 2, standbys: ['a', 'b"c', 'd'] });
  });

  it('reads no quorum from asynchronous or forms the operator never writes', () => {
    for (const value of ['', '*', 'FIRST 1 (a, b)', 'a, b', 'ANY 1 (a b)', 'ANY 1 ("a)']) {
      expect(parseCommitQuorum(value), value).toBeUndefined();
    }
  });
});

describe('the record of lists commits may count on', () => {
  const old = 'ANY 1 ("pg-1", "pg-2")';
  const wanted = { number: 1, standbys: ['pg-1'] };
  const at = (
    record: CommitQuorumRecord | undefined,
    names: string,
    lsn: bigint,
    standbys: StandbyConnection[],
    now: number,
  ) =>
    observeCommitQuorums(
      record,
      { synchronousStandbyNames: names, currentLsn: lsn, standbys },
      wanted,
      now,
      1000,
    );

  it('records a wanted list before the primary may run it, and keeps the old one until a quorum of the new holds what was written', () => {
    const first = at(undefined, old, 200n, [flushed('pg-1', 100n), flushed('pg-2', 200n)], 0);
    expect(first.mayApply).toBe(false);
    expect(first.record.quorums).toEqual([{ number: 1, standbys: ['pg-1', 'pg-2'] }, wanted]);
    // Saved; the next probe may apply it.
    const second = at(first.record, old, 200n, [flushed('pg-1', 100n), flushed('pg-2', 200n)], 1000);
    expect(second.mayApply).toBe(true);
    // Running now; pg-1 behind 200 for as long as it stays behind: both lists count.
    let record = second.record;
    for (let now = 2000; now < 10_000; now += 1000) {
      record = at(record, 'ANY 1 ("pg-1")', 200n, [flushed('pg-1', 150n)], now).record;
    }
    expect(record.quorums).toHaveLength(2);
    expect(record.running).toEqual({ quorum: wanted, seenAt: 2000, fromLsn: 200n });
    // pg-1 flushed past the position taken once the new list had run 1 s: the old one is dropped.
    record = at(record, 'ANY 1 ("pg-1")', 250n, [flushed('pg-1', 200n)], 10_000).record;
    expect(record.quorums).toEqual([wanted]);
  });

  it('starts the settle clock again when the primary is seen running another list', () => {
    const start: CommitQuorumRecord = {
      quorums: [{ number: 1, standbys: ['pg-1', 'pg-2'] }, wanted],
      running: { quorum: wanted, seenAt: 0, fromLsn: 100n },
    };
    // The other list seen running again: its clock starts, nothing is dropped yet.
    const seen = at(start, old, 300n, [flushed('pg-1', 300n), flushed('pg-2', 300n)], 5000).record;
    expect(seen.quorums).toEqual(start.quorums);
    expect(seen.running).toEqual({ quorum: { number: 1, standbys: ['pg-1', 'pg-2'] }, seenAt: 5000 });
  });

  it('keeps what the configuration files say until it runs: an ALTER SYSTEM whose reload has not come', () => {
    const running = { number: 1, standbys: ['pg-1'] };
    const next = { number: 1, standbys: ['pg-1', 'pg-2'] };
    const record: CommitQuorumRecord = {
      quorums: [running],
      running: { quorum: running, seenAt: 0, fromLsn: 100n },
    };
    const seen = observeCommitQuorums(
      record,
      {
        synchronousStandbyNames: 'ANY 1 ("pg-1")',
        configuredSynchronousStandbyNames: 'ANY 1 ("pg-1", "pg-2")',
        currentLsn: 300n,
        standbys: [flushed('pg-1', 300n)],
      },
      { number: 2, standbys: ['pg-1', 'pg-2'] },
      10_000,
      1000,
    );
    expect(seen.record.quorums).toEqual([running, next, { number: 2, standbys: ['pg-1', 'pg-2'] }]);
    expect(seen.mayApply).toBe(false);
  });
});
