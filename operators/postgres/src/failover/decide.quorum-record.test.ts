// The record of the synchronous lists commits may count on (ADR 0222) through sequences a review of
// its first version (7ce0ab0) tried: the first block broke that version (each test failed on it),
// the second held. Each drives decide() probe by probe as the engine does.
import { describe, expect, it } from 'vitest';
import { decide } from './decide.ts';
import type { FailoverState } from './failover-state.ts';
import { down, primary, replica } from '../test-support/instance-statuses.ts';
import {
  DecideDriver,
  endpoints,
  preferred,
  primaryRunning,
  required,
  standby,
} from '../test-support/decide-driver.ts';

describe('the commit-quorum record: sequences that broke its first version', () => {
  it('R5-1 a list the primary was asked to run is dropped as "older" when the spec changes again before the primary is seen running it', () => {
    // Two instances, pg-0 runs ANY 1 (pg-1), settled.
    const R = 'ANY 1 ("pg-1")';
    const engine = new DecideDriver().probe(
      endpoints(2),
      [primaryRunning(R, 100n, [standby('pg-1', 100n)]), replica('pg-1', 100n)],
      required(1),
      3,
    );
    // Scaled to three (pg-2 streams). Probe 1 records W = ANY 1 (pg-1, pg-2); probe 2 asks the
    // primary to run it (ALTER SYSTEM + pg_reload_conf), saving [W, R] with R "newest, seen now".
    const three = endpoints(3);
    const healthyR = [
      primaryRunning(R, 100n, [standby('pg-1', 100n), standby('pg-2', 100n)]),
      replica('pg-1', 100n),
      replica('pg-2', 100n),
    ];
    engine.probe(three, healthyR, required(1), 2);
    expect(engine.setNames()).toEqual(['ANY 1 ("pg-1", "pg-2")']);
    // Probe 3, one second later: the operator's session still reads R (perform.ts itself allows a
    // reload 5 s to reach new sessions, reloadReachesSessionsMs; the set's error is only a warning),
    // and the user has raised synchronous.number to 2 meanwhile. R has been "newest" for 1 s and
    // pg-1 flushed the primary's position, so settle() drops every other list, W included, though
    // W is the one the primary was asked to run last; the record becomes [R, ANY 2 (pg-1, pg-2)].
    // A second way to the same probe: ALTER SYSTEM wrote W and the pg_reload_conf() after it failed
    // (maintain only warns), so R is read truly; W then waits in postgresql.auto.conf for the next
    // reload or restart, with no record of it once the spec has moved on.
    // What the engine sees: the primary runs R, its configuration files say W (pg_file_settings).
    const asked = [
      primary('pg-0', 100n, {
        synchronousStandbyNames: R,
        configuredSynchronousStandbyNames: 'ANY 1 ("pg-1", "pg-2")',
        standbys: [standby('pg-1', 100n), standby('pg-2', 100n)],
      }),
      replica('pg-1', 100n),
      replica('pg-2', 100n),
    ];
    engine.probe(three, asked, required(2), 1);
    expect(engine.state.commitQuorums?.quorums.map((q) => `${q.number}:${q.standbys.join(',')}`)).toContain(
      '1:pg-1,pg-2',
    ); // kept: the configuration files say W (7ce0ab0 dropped it)
    // The reload now takes everywhere: pg-0 runs W and commit 200 is acknowledged by pg-2 alone
    // (pg-1 behind at 100). pg-0 and pg-2 fail before the next probe. Counting R (pg-1 answers,
    // 1 of 1) and ANY 2 of (pg-1, pg-2) (1 of 2 must answer: pg-1 does), pg-1 is promoted
    // without commit 200: an acknowledged commit is lost. Under W, 2 of 2 had to answer.
    engine.failOver(three, [down('pg-0'), replica('pg-1', 100n), down('pg-2')], required(2));
    expect(engine.promoted()).toEqual([]);
  });

  it('R5-2 at routing the record is rebuilt from the spec of that probe, not from the list the promotion set', () => {
    // pg-1 is being promoted in a cluster of four: the promote action sets
    // ANY 1 (pg-0, pg-2, pg-3) before pg_promote.
    const four = endpoints(4);
    const promoting: FailoverState = {
      currentPrimary: 'pg-0',
      targetPrimary: 'pg-1',
      commitQuorums: {
        quorums: [{ number: 1, standbys: ['pg-1', 'pg-2', 'pg-3'] }],
        running: { quorum: { number: 1, standbys: ['pg-1', 'pg-2', 'pg-3'] }, seenAt: 0, fromLsn: 1n },
      },
      operation: {
        kind: 'failover',
        step: 'promoting',
        reason: 'test',
        startedAt: 0,
        stepStartedAt: 0,
        fenced: ['pg-0'],
      },
    };
    const now = 1_000_000;
    const promote = decide({
      instances: four,
      observed: [down('pg-0'), replica('pg-1', 200n), replica('pg-2', 200n), replica('pg-3', 200n)],
      state: promoting,
      now,
      policy: required(1),
    });
    expect(promote.action).toMatchObject({
      type: 'promote',
      synchronousStandbyNames: 'ANY 1 ("pg-0", "pg-2", "pg-3")',
    });
    // The operator restarts after the promotion (state saved: routing) with the cluster scaled to
    // three (pg-3 leaving, its pod still terminating), and its first look at pg-1 fails (a timeout):
    // the route action needs no observation of pg-1 and succeeds.
    const routing = decide({
      instances: endpoints(3),
      observed: [down('pg-0'), { name: 'pg-1', reachable: false, error: 'timeout' }, replica('pg-2', 200n)],
      state: promote.next,
      now: now + 1000,
      policy: required(1),
    });
    expect(routing.action.type).toBe('route');
    // pg-1 runs ANY 1 (pg-0, pg-2, pg-3) and takes writes; the record holds only ANY 1 (pg-0, pg-2)
    // until the next settled probe, after the rejoin action (pg_rewind of pg-0: seconds to minutes).
    // A commit acknowledged by pg-3 alone in that time, then pg-1 lost: the failover counts
    // ANY 1 (pg-0, pg-2), both answer at the old position, and one is promoted without it.
    const lists = routing.next.commitQuorums?.quorums.map((q) => q.standbys.join(','));
    expect(lists).toContain('pg-0,pg-2,pg-3');
  });

  it('R5-3 a list the primary does not take (ALTER SYSTEM failing: only a warning) makes the status change on every probe', () => {
    // pg-0 runs ANY 1 (pg-1, pg-2); the spec wants ANY 2 (pg-1, pg-2); every ALTER SYSTEM fails
    // (a full volume, allow_alter_system = off): perform.ts logs a warning and the action counts
    // as done. The record goes [R, W] → [W, R] seen now → [W, R] + position → R holds, W dropped
    // and added back → [R, W] → ...: the status is written on every probe, forever. (Before the
    // change the state did not move: the warning repeated, nothing was written.)
    const R = 'ANY 1 ("pg-1", "pg-2")';
    const healthy = [
      primaryRunning(R, 100n, [standby('pg-1', 100n), standby('pg-2', 100n)]),
      replica('pg-1', 100n),
      replica('pg-2', 100n),
    ];
    const engine = new DecideDriver().probe(endpoints(3), healthy, required(1), 5);
    const before = engine.writes;
    engine.probe(endpoints(3), healthy, required(2), 30);
    expect(engine.writes - before).toBeLessThan(5);
  });

  it('R5-4 (latent: needs instances = 1 under required, which the CRD rule number < instances refuses today) the primary is never asked to run an empty list', () => {
    // maintainAction sets the list only when observeCommitQuorums says mayApply, and that is false
    // whenever the wanted value is '' (no quorum). Before 7ce0ab0 a one-instance cluster under
    // required was set to '' (synchronous.ts: "asks for no more of them than there are"); now it
    // keeps ANY 1 (pg-1) with pg-1 gone and every commit waits forever.
    const engine = new DecideDriver().probe(
      endpoints(2),
      [primaryRunning('ANY 1 ("pg-1")', 100n, [standby('pg-1', 100n)]), replica('pg-1', 100n)],
      required(1),
      3,
    );
    engine.probe(endpoints(1), [primaryRunning('ANY 1 ("pg-1")', 100n, [])], required(1), 10);
    expect(engine.setNames()).toContain('');
  });
});

describe('the commit-quorum record: sequences that held', () => {
  it('preferred: one instance left, the list is cleared (mayApply is only consulted under required)', () => {
    const engine = new DecideDriver().probe(
      endpoints(2),
      [primaryRunning('ANY 1 ("pg-1")', 100n, [standby('pg-1', 100n)]), replica('pg-1', 100n)],
      preferred(1),
      3,
    );
    engine.probe(endpoints(1), [primaryRunning('ANY 1 ("pg-1")', 100n, [])], preferred(1), 2);
    expect(engine.setNames()).toContain('');
  });

  it('a restart before the save of the probe that recorded a list: the next probe records it again and does not apply it', () => {
    const R = 'ANY 1 ("pg-1")';
    const engine = new DecideDriver().probe(
      endpoints(2),
      [primaryRunning(R, 100n, [standby('pg-1', 100n)]), replica('pg-1', 100n)],
      required(1),
      3,
    );
    const saved = engine.state;
    const three = endpoints(3);
    const obs = [
      primaryRunning(R, 100n, [standby('pg-1', 100n), standby('pg-2', 100n)]),
      replica('pg-1', 100n),
      replica('pg-2', 100n),
    ];
    engine.probe(three, obs, required(1));
    expect(engine.setNames()).toEqual([]);
    engine.state = saved; // lost: the operator stopped before saving
    engine.probe(three, obs, required(1));
    expect(engine.setNames()).toEqual([]);
    engine.probe(three, obs, required(1));
    expect(engine.setNames()).toEqual(['ANY 1 ("pg-1", "pg-2")']);
  });

  it('scale-up 3 → 4 and number lowered 2 → 1: the old list is dropped once the new holds, then a failover promotes the holder', () => {
    const two = 'ANY 2 ("pg-1", "pg-2")';
    const engine = new DecideDriver().probe(
      endpoints(3),
      [
        primaryRunning(two, 100n, [standby('pg-1', 100n), standby('pg-2', 100n)]),
        replica('pg-1', 100n),
        replica('pg-2', 100n),
      ],
      required(2),
      3,
    );
    const four = endpoints(4);
    const one = 'ANY 1 ("pg-1", "pg-2", "pg-3")';
    const streaming = [standby('pg-1', 300n), standby('pg-2', 300n), standby('pg-3', 300n)];
    engine.probe(
      four,
      [
        primaryRunning(two, 300n, streaming),
        replica('pg-1', 300n),
        replica('pg-2', 300n),
        replica('pg-3', 300n),
      ],
      required(1),
      2,
    );
    engine.probe(
      four,
      [
        primaryRunning(one, 300n, streaming),
        replica('pg-1', 300n),
        replica('pg-2', 300n),
        replica('pg-3', 300n),
      ],
      required(1),
      4,
    );
    expect(engine.state.commitQuorums?.quorums).toEqual([{ number: 1, standbys: ['pg-1', 'pg-2', 'pg-3'] }]);
    engine.failOver(
      four,
      [down('pg-0'), replica('pg-1', 300n), replica('pg-2', 350n), replica('pg-3', 300n)],
      required(1),
    );
    expect(engine.promoted()).toEqual(['pg-2']);
  });

  it('a healthy cluster with a settled record writes its status a bounded number of times', () => {
    const R = 'ANY 1 ("pg-1", "pg-2")';
    const healthy = [
      primaryRunning(R, 100n, [standby('pg-1', 100n), standby('pg-2', 100n)]),
      replica('pg-1', 100n),
      replica('pg-2', 100n),
    ];
    const engine = new DecideDriver().probe(endpoints(3), healthy, required(1), 3);
    const before = engine.writes;
    engine.probe(endpoints(3), healthy, required(1), 20);
    expect(engine.writes).toBe(before);
  });

  it('no record (an older operator): a failover counts the spec, every other instance', () => {
    const engine = new DecideDriver();
    engine.failOver(endpoints(3), [down('pg-0'), replica('pg-1', 100n), down('pg-2')], required(1), 30);
    expect(engine.promoted()).toEqual([]);
  });

  it('preferred → required: the preferred list the primary runs is recorded first, the spec list is applied a probe later', () => {
    const P = 'ANY 1 ("pg-1")';
    const obs = [
      primaryRunning(P, 100n, [standby('pg-1', 100n)]),
      replica('pg-1', 100n),
      replica('pg-2', 50n),
    ];
    const engine = new DecideDriver().probe(endpoints(3), obs, preferred(1), 3);
    expect(engine.state.commitQuorums).toBeUndefined();
    engine.probe(endpoints(3), obs, required(1), 1);
    expect(engine.setNames()).toEqual([]);
    expect(engine.state.commitQuorums?.quorums).toEqual([
      { number: 1, standbys: ['pg-1'] },
      { number: 1, standbys: ['pg-1', 'pg-2'] },
    ]);
    engine.probe(endpoints(3), obs, required(1), 1);
    expect(engine.setNames()).toEqual(['ANY 1 ("pg-1", "pg-2")']);
  });

  it('an old primary brought back after it was asked to run a new list keeps both lists', () => {
    const R = 'ANY 1 ("pg-1")';
    const W = 'ANY 1 ("pg-1", "pg-2")';
    const engine = new DecideDriver().probe(
      endpoints(2),
      [primaryRunning(R, 100n, [standby('pg-1', 100n)]), replica('pg-1', 100n)],
      required(1),
      3,
    );
    const three = endpoints(3);
    engine.probe(
      three,
      [
        primaryRunning(R, 100n, [standby('pg-1', 100n), standby('pg-2', 100n)]),
        replica('pg-1', 100n),
        replica('pg-2', 100n),
      ],
      required(1),
      2,
    );
    expect(engine.setNames()).toEqual([W]);
    // Everything goes down; pg-0 comes back alone, running W.
    engine.probe(three, [down('pg-0'), down('pg-1'), down('pg-2')], required(1), 25);
    expect(engine.state.operation?.step).toBe('reinstating');
    engine.probe(three, [primaryRunning(W, 200n, []), down('pg-1'), down('pg-2')], required(1), 4);
    expect(engine.state.operation).toBeUndefined();
    expect(engine.state.commitQuorums?.quorums).toContainEqual({ number: 1, standbys: ['pg-1', 'pg-2'] });
    expect(engine.state.commitQuorums?.quorums).toContainEqual({ number: 1, standbys: ['pg-1'] });
  });

  it('a list set, seen running one probe later while the spec changes again: it becomes the newest and stays', () => {
    // R5-1 without the stale read: the primary is seen running W at probe 3; W is kept.
    const R = 'ANY 1 ("pg-1")';
    const W = 'ANY 1 ("pg-1", "pg-2")';
    const engine = new DecideDriver().probe(
      endpoints(2),
      [primaryRunning(R, 100n, [standby('pg-1', 100n)]), replica('pg-1', 100n)],
      required(1),
      3,
    );
    const three = endpoints(3);
    const st = [standby('pg-1', 100n), standby('pg-2', 200n)];
    engine.probe(
      three,
      [primaryRunning(R, 100n, st), replica('pg-1', 100n), replica('pg-2', 200n)],
      required(1),
      2,
    );
    engine.probe(
      three,
      [primaryRunning(W, 200n, st), replica('pg-1', 100n), replica('pg-2', 200n)],
      required(2),
      1,
    );
    engine.failOver(three, [down('pg-0'), replica('pg-1', 100n), down('pg-2')], required(2));
    expect(engine.promoted()).toEqual([]);
  });
});
