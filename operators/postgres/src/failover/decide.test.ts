import { describe, expect, it } from 'vitest';
import { decide, defaultPolicy, type DecideInput } from './decide.ts';
import { settledState, type FailoverState, type Operation } from './failover-state.ts';
import type { InstanceStatus } from '../instance/observe.ts';
import { down, primary, replica } from '../test-support/instance-statuses.ts';

const instances = ['pg-0', 'pg-1', 'pg-2'].map((name, i) => ({ name, host: '10.0.0.1', port: 5432 + i }));

function input(
  state: FailoverState,
  observed: InstanceStatus[],
  extra: Partial<DecideInput> = {},
): DecideInput {
  return { instances, observed, state, now: 100_000, policy: defaultPolicy, ...extra };
}

function inStep(step: Operation['step'], changes: Partial<Operation> = {}, target = 'pg-0'): FailoverState {
  return {
    currentPrimary: 'pg-0',
    targetPrimary: target,
    failingSince: 90_000,
    operation: {
      kind: 'failover',
      step,
      reason: 'test',
      startedAt: 95_000,
      stepStartedAt: 99_000,
      fenced: step === 'fencing' ? [] : ['pg-0'],
      ...changes,
    },
  };
}

describe('decide', () => {
  it('keeps a healthy primary: re-points a replica streaming elsewhere, sets synchronous names', () => {
    const d = decide(
      input(
        settledState('pg-0'),
        [
          primary('pg-0', 100n, {
            standbys: [
              {
                applicationName: 'pg-1',
                state: 'streaming',
                syncState: 'async',
                flushLsn: 100n,
                replayLsn: 100n,
              },
            ],
          }),
          replica('pg-1', 100n, 5432),
          replica('pg-2', 90n),
        ],
        { policy: { ...defaultPolicy, synchronous: { number: 1, dataDurability: 'preferred' } } },
      ),
    );
    expect(d.action).toEqual({
      type: 'maintain',
      primary: 'pg-0',
      repoint: ['pg-2'],
      synchronousStandbyNames: 'ANY 1 ("pg-1")',
    });
    expect(d.next).toEqual(settledState('pg-0'));
  });

  it('gives writes back to a primary left read-only with no switchover in progress, on every probe', () => {
    // What a failed undo of a switchover's quiesce leaves: the primary settled, yet read-only.
    const observed = [primary('pg-0', 100n, { readOnly: true }), replica('pg-1', 100n, 5432)];
    const d = decide(input(settledState('pg-0'), observed));
    expect(d.action).toEqual({ type: 'maintain', primary: 'pg-0', repoint: [], giveWritesBack: true });
    expect(d.next).toEqual(settledState('pg-0'));
    expect(d.refusal).toBeUndefined();
    const writable = decide(
      input(settledState('pg-0'), [primary('pg-0', 100n), replica('pg-1', 100n, 5432)]),
    );
    expect(writable.action).toEqual({ type: 'maintain', primary: 'pg-0', repoint: [] });
  });

  it('counts the failover delay from the recorded failingSince, so a restart does not reset it', () => {
    const observed = [down('pg-0'), replica('pg-1', 100n), replica('pg-2', 100n)];
    const first = decide(input(settledState('pg-0'), observed));
    expect(first.next.failingSince).toBe(100_000);
    expect(first.action).toEqual({ type: 'wait', retryAfterMs: 2000 });
    expect(first.events.map((e) => e.type)).toEqual(['primary-failing']);

    // A new engine, 2.5 s later, with what the first one saved: the delay is over.
    const later = decide(input(first.next, observed, { now: 102_500, lastPrimaryLsn: 120n }));
    expect(later.action).toEqual({ type: 'none' });
    expect(later.next.operation).toMatchObject({ kind: 'failover', step: 'fencing', referenceLsn: 120n });
    expect(later.events.map((e) => e.type)).toEqual(['failover-started']);
  });

  it('never fails over a primary that answers with an error: it is alive, refusing or busy', () => {
    const refusing: InstanceStatus = {
      name: 'pg-0',
      reachable: false,
      error: 'sorry, too many clients already',
      sqlState: '53300',
    };
    const failing = { ...settledState('pg-0'), failingSince: 50_000 };
    const d = decide(input(failing, [refusing, replica('pg-1', 100n), replica('pg-2', 100n)]));
    expect(d.next).toEqual(failing);
    expect(d.action).toEqual({ type: 'none' });
    expect(d.refusal).toEqual({
      code: 'primary-refusing',
      reason:
        'the primary pg-0 answers but refuses the operator (sorry, too many clients already; SQLSTATE 53300): it is alive, so it is not failed over',
    });
    // No answer at all, past the delay: a failover.
    const dead = decide(input(failing, [down('pg-0'), replica('pg-1', 100n), replica('pg-2', 100n)]));
    expect(dead.next.operation?.step).toBe('fencing');
  });

  it('drops the idle slots of instances no longer in the cluster, never one in use', () => {
    const slots = [
      { name: 'homeostat_pg_1', active: true, retainedBytes: 0n },
      { name: 'homeostat_pg_2', active: false, retainedBytes: 0n }, // pg-2 is down, still a member
      { name: 'homeostat_pg_3', active: false, retainedBytes: 1n << 30n }, // pg-3 was scaled away
      { name: 'homeostat_pg_4', active: true, retainedBytes: 0n }, // still streaming: left alone
      { name: 'backup_tool', active: false, retainedBytes: 0n }, // not the operator's
    ];
    const d = decide(
      input(settledState('pg-0'), [primary('pg-0', 100n, { slots }), replica('pg-1', 100n, 5432)]),
    );
    expect(d.action).toMatchObject({ type: 'maintain', dropSlots: ['homeostat_pg_3'] });
    const none = decide(input(settledState('pg-0'), [primary('pg-0', 100n), replica('pg-1', 100n, 5432)]));
    expect(none.action).not.toHaveProperty('dropSlots');
  });

  it('makes again the slot of a replica that runs without one (its creation at a failover failed), or it never streams', () => {
    const slots = [{ name: 'homeostat_pg_1', active: true, retainedBytes: 0n }];
    const d = decide(
      input(settledState('pg-0'), [
        primary('pg-0', 100n, { slots }),
        replica('pg-1', 100n, 5432),
        replica('pg-2', 90n),
      ]),
    );
    expect(d.action).toMatchObject({ type: 'maintain', createSlots: ['pg-2'] });
    const whole = decide(
      input(settledState('pg-0'), [
        primary('pg-0', 100n, {
          slots: [...slots, { name: 'homeostat_pg_2', active: true, retainedBytes: 0n }],
        }),
        replica('pg-1', 100n, 5432),
        replica('pg-2', 100n, 5432),
      ]),
    );
    expect(whole.action).not.toHaveProperty('createSlots');
    // Slots not read: nothing is known to be missing.
    const unknown = decide(input(settledState('pg-0'), [primary('pg-0', 100n), replica('pg-2', 90n)]));
    expect(unknown.action).not.toHaveProperty('createSlots');
  });

  it('fences before electing, and records the fenced instance', () => {
    const d = decide(input(inStep('fencing'), [down('pg-0'), replica('pg-1', 100n), replica('pg-2', 100n)]));
    expect(d.action).toEqual({ type: 'fence', instance: 'pg-0' });
    expect(d.next.operation).toMatchObject({ step: 'electing', fenced: ['pg-0'], stepStartedAt: 100_000 });
    expect(d.onFailure?.code).toBe('fence-failed');
  });

  it('waits while a replica still streams, then fences again rather than promote', () => {
    const observed = [down('pg-0'), replica('pg-1', 100n, 5432), replica('pg-2', 100n)];
    expect(decide(input(inStep('electing'), observed)).action).toEqual({ type: 'wait', retryAfterMs: 100 });
    const late = decide(input(inStep('electing'), observed, { now: 99_000 + 10_001 }));
    expect(late.refusal?.code).toBe('old-primary-still-streaming');
    expect(late.next.operation?.step).toBe('fencing');
  });

  it('does not count a receiver silent past the bound as streaming (a stuck one held failovers forever)', () => {
    const stuck = replica('pg-1', 100n, 5432);
    const silent = {
      ...stuck,
      walReceiver: { status: 'streaming', senderHost: '10.0.0.1', senderPort: 5432, silentForMs: 240_000 },
    };
    const d = decide(input(inStep('electing'), [down('pg-0'), silent, replica('pg-2', 100n)]));
    expect(d.action).toEqual({ type: 'none' });
    expect(d.next.operation?.step).toBe('promoting');
    const heard = { ...stuck, walReceiver: { ...silent.walReceiver, silentForMs: 1_000 } };
    expect(decide(input(inStep('electing'), [down('pg-0'), heard, replica('pg-2', 100n)])).action.type).toBe(
      'wait',
    );
  });

  it('records the chosen instance before anything promotes it', () => {
    const d = decide(input(inStep('electing'), [down('pg-0'), replica('pg-1', 100n), replica('pg-2', 120n)]));
    expect(d.action).toEqual({ type: 'none' });
    expect(d.next).toMatchObject({ targetPrimary: 'pg-2', operation: { step: 'promoting' } });
    expect(d.verdicts?.map((v) => v.eligible)).toEqual([true, true]);
  });

  it('under required, elects only the standby holding the highest received position', () => {
    const policy = { ...defaultPolicy, synchronous: { number: 1, dataDurability: 'required' as const } };
    const slow = replica('pg-1', 64n << 20n, undefined, { replayLsn: 1n << 20n }); // received all, replays slowly
    const d = decide(
      input(inStep('electing'), [down('pg-0'), slow, replica('pg-2', 60n << 20n)], { policy }),
    );
    expect(d.next).toMatchObject({ targetPrimary: 'pg-1', operation: { step: 'promoting' } });
  });

  it('under required, refuses unless enough standbys answered to hold every acknowledged commit', () => {
    const policy = { ...defaultPolicy, synchronous: { number: 1, dataDurability: 'required' as const } };
    const d = decide(
      input(inStep('electing'), [down('pg-0'), down('pg-1'), replica('pg-2', 100n)], { policy }),
    );
    expect(d.action).toEqual({ type: 'none' });
    expect(d.refusal?.code).toBe('no-eligible-replica');
    expect(d.refusal?.reason).toMatch(
      /^only 1 of 2 synchronous standbys answered .*; commits were acknowledged by ANY 1 of 2 \(pg-1, pg-2\), so 2 of them must answer to be sure one holds every acknowledged commit; pg-0 \(the old primary/,
    );
  });

  it('never promotes twice: a target found promoted goes on to routing', () => {
    const d = decide(
      input(inStep('promoting', {}, 'pg-2'), [down('pg-0'), replica('pg-1', 100n), primary('pg-2', 130n)]),
    );
    expect(d.action).toEqual({ type: 'none' });
    expect(d.next.operation?.step).toBe('routing');
  });

  it('promotes the recorded target only, and refuses next to another writer', () => {
    const observed = [down('pg-0'), replica('pg-1', 140n), replica('pg-2', 120n)];
    const d = decide(input(inStep('promoting', {}, 'pg-2'), observed));
    expect(d.action).toEqual({ type: 'promote', instance: 'pg-2', synchronousStandbyNames: '' });
    const twoWriters = decide(
      input(inStep('promoting', {}, 'pg-2'), [down('pg-0'), primary('pg-1', 140n), replica('pg-2', 120n)]),
    );
    expect(twoWriters.refusal?.code).toBe('second-primary');
    expect(twoWriters.action).toEqual({ type: 'none' });
  });

  it('promotes no sooner than a cut-off primary has stopped itself, counted from failingSince', () => {
    const observed = [down('pg-0'), replica('pg-1', 140n), replica('pg-2', 120n)];
    const policy = { ...defaultPolicy, isolatedPrimaryStopsWithinMs: 2000 };
    // failingSince 90 000: nothing is promoted before 92 000, whatever else is ready.
    const early = decide(input(inStep('promoting', {}, 'pg-2'), observed, { now: 91_400, policy }));
    expect(early.action).toEqual({ type: 'wait', retryAfterMs: 600 });
    expect(early.next).toEqual(inStep('promoting', {}, 'pg-2'));
    const due = decide(input(inStep('promoting', {}, 'pg-2'), observed, { now: 92_000, policy }));
    expect(due.action).toEqual({ type: 'promote', instance: 'pg-2', synchronousStandbyNames: '' });
    // A switchover stopped the old primary cleanly itself: no wait.
    const switchover = inStep('promoting', { kind: 'switchover' }, 'pg-2');
    expect(decide(input(switchover, observed, { now: 90_100, policy })).action.type).toBe('promote');
  });

  it('fences a target lost before its promotion and chooses among the others', () => {
    const d = decide(
      input(inStep('promoting', {}, 'pg-2'), [down('pg-0'), replica('pg-1', 100n), down('pg-2')]),
    );
    expect(d.action).toEqual({ type: 'fence', instance: 'pg-2' });
    expect(d.next).toMatchObject({
      targetPrimary: 'pg-0',
      operation: { step: 'electing', fenced: ['pg-0', 'pg-2'] },
    });
  });

  it('routes, then rejoins the fenced instances, then settles on the new primary', () => {
    const routing = decide(
      input(inStep('routing', {}, 'pg-1'), [down('pg-0'), primary('pg-1', 100n), replica('pg-2', 100n)]),
    );
    expect(routing.action).toEqual({
      type: 'route',
      primary: 'pg-1',
      slotsFor: ['pg-0', 'pg-2'],
      repoint: ['pg-2'],
    });
    expect(routing.next).toMatchObject({ currentPrimary: 'pg-1', operation: { step: 'rejoining' } });
    const rejoining = decide(
      input(routing.next, [down('pg-0'), primary('pg-1', 100n), replica('pg-2', 100n)]),
    );
    expect(rejoining.action).toEqual({ type: 'rejoin', instances: ['pg-0'], primary: 'pg-1' });
    expect(rejoining.next).toEqual(settledState('pg-1'));
    expect(rejoining.completes).toBe(true);
  });

  it('waits for an eligible replica until the election deadline, saying when the old primary comes back', () => {
    const observed = [down('pg-0'), down('pg-1'), down('pg-2')];
    const fenced = decide(input(inStep('fencing'), observed));
    expect(fenced.next.operation).toMatchObject({ step: 'electing', deadline: 100_000 + 10_000 });
    const waiting = decide(input(fenced.next, observed, { now: 105_000 }));
    expect(waiting.refusal?.code).toBe('no-eligible-replica');
    expect(waiting.refusal?.reason).toMatch(
      /^no eligible replica: .*; pg-0 \(the old primary: nothing was promoted, so its data is the newest\) is brought back at 1970-01-01T00:01:50\.000Z unless a replica becomes eligible first$/,
    );
    expect(waiting.next).toEqual(fenced.next);
  });

  it('brings the old primary back when no replica became eligible by the deadline', () => {
    // pg-2 is too far behind the old primary's last position to be promoted.
    const state = inStep('electing', { deadline: 100_000, referenceLsn: 64n << 20n });
    const d = decide(input(state, [down('pg-0'), down('pg-1'), replica('pg-2', 10n)]));
    expect(d.action).toEqual({ type: 'none' });
    expect(d.next).toMatchObject({
      currentPrimary: 'pg-0',
      targetPrimary: 'pg-0',
      operation: { step: 'reinstating', fenced: ['pg-0'], deadline: 100_000 + 60_000 },
    });
    expect(d.events.map((e) => [e.type, e.instance])).toContainEqual(['reinstating', 'pg-0']);
    // An election deadline of a state saved without one counts from the step's start.
    const old = decide(
      input(inStep('electing'), [down('pg-0'), down('pg-1'), down('pg-2')], { now: 109_001 }),
    );
    expect(old.next.operation?.step).toBe('reinstating');
  });

  it('never brings the old primary back next to another writer', () => {
    const state = inStep('electing', { deadline: 100_000, fenced: ['pg-0', 'pg-2'] }, 'pg-0');
    const d = decide(input(state, [down('pg-0'), down('pg-1'), primary('pg-2', 10n)]));
    expect(d.refusal?.code).toBe('second-primary');
    expect(d.next).toEqual(state);
  });

  it('waits for the old primary to come back, then routes writes to it and rejoins no one else', () => {
    const state = inStep('reinstating', { deadline: 160_000 });
    const starting = decide(input(state, [down('pg-0'), down('pg-1'), down('pg-2')]));
    expect(starting.action).toEqual({ type: 'wait', retryAfterMs: 500 });
    expect(starting.yields).toBe(true);
    expect(starting.next).toEqual(state);
    const up = decide(input(state, [primary('pg-0', 100n), down('pg-1'), down('pg-2')]));
    expect(up.next).toMatchObject({ targetPrimary: 'pg-0', operation: { step: 'routing' } });
    const routing = decide(input(up.next, [primary('pg-0', 100n), down('pg-1'), replica('pg-2', 100n)]));
    expect(routing.action).toEqual({
      type: 'route',
      primary: 'pg-0',
      slotsFor: ['pg-1', 'pg-2'],
      repoint: ['pg-2'],
    });
    const rejoining = decide(input(routing.next, [primary('pg-0', 100n), down('pg-1'), down('pg-2')]));
    expect(rejoining.action).toEqual({ type: 'rejoin', instances: [], primary: 'pg-0' });
    expect(rejoining.next).toEqual(settledState('pg-0'));
  });

  it('past its deadline, gives up on an old primary that does not come back once a replica is eligible', () => {
    const state = inStep('reinstating', { deadline: 100_000, referenceLsn: 64n << 20n });
    const lagging = decide(input(state, [down('pg-0'), replica('pg-1', 1n), down('pg-2')]));
    expect(lagging.next).toEqual(state); // nothing better: keep waiting (a long crash recovery)
    const d = decide(input(state, [down('pg-0'), replica('pg-1', 64n << 20n), down('pg-2')]));
    expect(d.next).toMatchObject({ targetPrimary: 'pg-0', operation: { step: 'fencing', fenced: ['pg-0'] } });
    expect(d.events.map((e) => e.type)).toContain('warning');
    // Still inside its deadline: the old primary is waited for, whatever the replicas say.
    const early = decide(
      input(inStep('reinstating', { deadline: 160_000 }), [
        down('pg-0'),
        replica('pg-1', 100n),
        down('pg-2'),
      ]),
    );
    expect(early.next.operation?.step).toBe('reinstating');
  });

  it('refuses a switchover to a lagging replica and changes nothing', () => {
    const d = decide(
      input(
        settledState('pg-0'),
        [primary('pg-0', 64n << 20n), replica('pg-1', 0n, 5432), replica('pg-2', 0n, 5432)],
        {
          desiredPrimary: 'pg-1',
        },
      ),
    );
    expect(d.refusal?.code).toBe('target-lagging');
    expect(d.next).toEqual(settledState('pg-0'));
  });

  it('gives writes back when the switchover target does not catch up in time', () => {
    const state: FailoverState = {
      currentPrimary: 'pg-0',
      targetPrimary: 'pg-1',
      operation: {
        kind: 'switchover',
        step: 'catching-up',
        reason: 't',
        startedAt: 0,
        stepStartedAt: 0,
        fenced: [],
      },
    };
    const observed = [primary('pg-0', 200n), replica('pg-1', 100n, 5432), replica('pg-2', 200n, 5432)];
    const d = decide(input(state, observed, { now: 30_001 }));
    expect(d.action).toEqual({ type: 'undo-quiesce', instance: 'pg-0' });
    expect(d.next).toEqual(settledState('pg-0'));
    expect(d.refusal?.code).toBe('target-did-not-catch-up');
    const caughtUp = decide(
      input(state, [primary('pg-0', 200n), replica('pg-1', 200n, 5432), replica('pg-2', 200n)]),
    );
    expect(caughtUp.next.operation).toMatchObject({ step: 'stopping', quiescedLsn: 200n });
  });
});
