import { describe, expect, it } from 'vitest';
import { SettlingRefusals, settlingPatienceMs } from './settling-refusals.ts';

function clock() {
  let now = 1_000_000;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

describe('SettlingRefusals: when leadership moves off a leader that refuses adds', () => {
  it('waits the patience before moving, measured from the first refusal of that leader', () => {
    const time = clock();
    const refusals = new SettlingRefusals(time.now);
    expect(refusals.refused('c', 'L1').moveLeadership).toBe(false);
    time.advance(settlingPatienceMs - 1);
    expect(refusals.refused('c', 'L1').moveLeadership).toBe(false);
    time.advance(1);
    expect(refusals.refused('c', 'L1')).toMatchObject({
      moveLeadership: true,
      refusingForMs: settlingPatienceMs,
    });
  });

  it('gives a new leader its own patience and never moves away from the same leader twice in a run', () => {
    const time = clock();
    const refusals = new SettlingRefusals(time.now);
    refusals.refused('c', 'L1');
    time.advance(settlingPatienceMs);
    expect(refusals.refused('c', 'L1').moveLeadership).toBe(true);
    refusals.movedAway('c', 'L1');
    expect(refusals.refused('c', 'L2').moveLeadership).toBe(false);
    time.advance(settlingPatienceMs);
    const second = refusals.refused('c', 'L2');
    expect(second.moveLeadership).toBe(true);
    expect([...second.movedFrom]).toEqual(['L1']);
    refusals.movedAway('c', 'L2');
    // Back on L1 (say, an election): it refused before in this run, so it keeps leadership.
    refusals.refused('c', 'L1');
    time.advance(settlingPatienceMs);
    expect(refusals.refused('c', 'L1')).toMatchObject({
      moveLeadership: false,
      refusingForMs: settlingPatienceMs,
    });
  });

  it('starts a new run after an add went through, or after a minute without refusals', () => {
    const time = clock();
    const refusals = new SettlingRefusals(time.now);
    refusals.refused('c', 'L1');
    time.advance(settlingPatienceMs);
    refusals.movedAway('c', 'L1');
    refusals.settled('c');
    refusals.refused('c', 'L1');
    time.advance(settlingPatienceMs);
    expect(refusals.refused('c', 'L1').moveLeadership).toBe(true);
    refusals.movedAway('c', 'L1');
    time.advance(6 * settlingPatienceMs + 1);
    expect(refusals.refused('c', 'L1').moveLeadership).toBe(false);
    time.advance(settlingPatienceMs);
    expect(refusals.refused('c', 'L1').moveLeadership).toBe(true);
  });

  it('starts the patience again after a voter stopped answering: a restarted voter is not a stale view', () => {
    // L1 refuses while every voter answers; then a voter restarts. While it is down (seen by the
    // operator) the refusals are etcd being right; once it answers again its streams are new, and
    // the leader is right to refuse for etcd's 5 s HealthInterval: no move before a fresh patience.
    const time = clock();
    const refusals = new SettlingRefusals(time.now);
    refusals.refused('c', 'L1');
    time.advance(settlingPatienceMs - 2_000);
    refusals.voterSilent('c');
    time.advance(4_000);
    expect(refusals.refused('c', 'L1')).toMatchObject({ moveLeadership: false, refusingForMs: 0 });
    time.advance(settlingPatienceMs);
    expect(refusals.refused('c', 'L1').moveLeadership).toBe(true);
  });

  it('forgets a cluster whose refusals stopped without an add (deleted, scaled back, restored)', () => {
    // Nothing else ends such a run: the operator would hold one entry per such cluster for good.
    const time = clock();
    const refusals = new SettlingRefusals(time.now);
    refusals.refused('deleted', 'L1');
    refusals.refused('kept', 'L1');
    expect(refusals.trackedClusters()).toBe(2);
    time.advance(6 * settlingPatienceMs + 1);
    refusals.refused('kept', 'L1');
    expect(refusals.trackedClusters()).toBe(1);
  });

  it('counts only refusals that follow each other: one after a quiet spell starts the patience again', () => {
    // A refusal (etcd briefly right), then no add for a while (the scale-up reverted, say), then a
    // new scale-up right after a voter restarted unseen: the first refusal is no evidence of a
    // stale view 40 s later. The reconciler retries a refused add every 2 s.
    const time = clock();
    const refusals = new SettlingRefusals(time.now);
    refusals.refused('c', 'L1');
    time.advance(4 * settlingPatienceMs);
    expect(refusals.refused('c', 'L1')).toMatchObject({ moveLeadership: false, refusingForMs: 0 });
    for (let retry = 1; retry < 5; retry++) {
      time.advance(2_000);
      expect(refusals.refused('c', 'L1').moveLeadership).toBe(false);
    }
    time.advance(2_000);
    expect(refusals.refused('c', 'L1').moveLeadership).toBe(true);
  });

  it('keeps clusters apart', () => {
    const time = clock();
    const refusals = new SettlingRefusals(time.now);
    refusals.refused('a', 'L1');
    time.advance(settlingPatienceMs);
    expect(refusals.refused('b', 'L1').moveLeadership).toBe(false);
    expect(refusals.refused('a', 'L1').moveLeadership).toBe(true);
  });
});
