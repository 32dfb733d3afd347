import { describe, expect, it } from 'vitest';
import { chooseFailoverCandidate } from './candidate.ts';
import type { InstanceStatus, ReplicaStatus } from '../instance/observe.ts';

const replica = (
  name: string,
  received: bigint | undefined,
  replayed: bigint | undefined,
): ReplicaStatus => ({
  name,
  reachable: true,
  role: 'replica',
  timeline: 1,
  synchronousStandbyNames: '',
  receivedLsn: received,
  replayLsn: replayed,
  walReceiver: undefined,
  replayPaused: false,
});
const bound = 1000n;
const rules = (lastKnownPrimaryLsn: bigint | undefined) => ({ lastKnownPrimaryLsn, maxLagBytes: bound });

describe('choosing the replica to promote', () => {
  it('prefers the highest received LSN, then the highest replay LSN, then the name', () => {
    const pick = (statuses: InstanceStatus[]) => {
      const choice = chooseFailoverCandidate(statuses, rules(undefined));
      return choice.ok ? choice.candidate.name : choice.reason;
    };
    expect(pick([replica('a', 500n, 500n), replica('b', 600n, 450n)])).toBe('b');
    expect(pick([replica('a', 600n, 500n), replica('b', 600n, 550n)])).toBe('b');
    expect(pick([replica('b', 600n, 550n), replica('a', 600n, 550n)])).toBe('a');
  });

  it('never picks an unreachable instance, a primary, or a replica past the lag bound', () => {
    const choice = chooseFailoverCandidate(
      [
        { name: 'down', reachable: false, error: 'connect ECONNREFUSED 127.0.0.1:5432' },
        {
          name: 'writer',
          reachable: true,
          role: 'primary',
          timeline: 1,
          synchronousStandbyNames: '',
          currentLsn: 9000n,
          standbys: [],
        },
        replica('far', 9000n, 7000n), // received everything, applied far less
        replica('near', 8500n, 8500n),
      ],
      rules(9000n),
    );
    expect(choice.ok && choice.candidate.name).toBe('near');
    expect(choice.verdicts.map((v) => [v.name, v.eligible])).toEqual([
      ['down', false],
      ['writer', false],
      ['far', false],
      ['near', true],
    ]);
    expect(choice.verdicts[2]?.reason).toBe('replayed 0/1B58, 2000 bytes behind 0/2328 (bound 1000 bytes)');
  });

  it('measures lag from the furthest known position, the old primary or any replica', () => {
    const choice = chooseFailoverCandidate(
      [replica('a', 5000n, 5000n), replica('b', 3000n, 3000n)],
      rules(4000n),
    );
    expect(choice.verdicts.map((v) => v.reason)).toEqual([
      'lag 0 bytes',
      'replayed 0/BB8, 2000 bytes behind 0/1388 (bound 1000 bytes)',
    ]);
  });

  it('explains a refusal instance by instance', () => {
    const choice = chooseFailoverCandidate(
      [{ name: 'pg-1', reachable: false, error: 'timeout' }, replica('pg-2', undefined, undefined)],
      rules(100n),
    );
    expect(choice).toMatchObject({
      ok: false,
      reason: 'no eligible replica: pg-1 unreachable (timeout); pg-2 has not replayed any WAL yet',
    });
    expect(chooseFailoverCandidate([], rules(100n))).toMatchObject({
      ok: false,
      reason: 'no eligible replica: no replicas',
    });
  });

  describe('under dataDurability required (ANY k of n standbys acknowledged each commit)', () => {
    const required = (number: number, ...standbys: string[]) => ({
      ...rules(9000n),
      quorums: [{ number, standbys: standbys.sort() }],
    });

    it('promotes only a standby holding the highest received position, however far its replay lags', () => {
      const choice = chooseFailoverCandidate(
        [replica('slow', 9000n, 1000n), replica('fast', 8000n, 8000n)],
        required(1, 'slow', 'fast'),
      );
      expect(choice.ok && choice.candidate.name).toBe('slow');
      expect(choice.verdicts).toEqual([
        {
          name: 'slow',
          eligible: true,
          reason: 'holds the highest received position 0/2328, replay lag 8000 bytes',
        },
        {
          name: 'fast',
          eligible: false,
          reason:
            'holds 0/1F40, less than 0/2328 received by another standby (acknowledged commits may be missing)',
        },
      ]);
    });

    it('orders the standbys holding the highest position by replay', () => {
      const choice = chooseFailoverCandidate(
        [replica('a', 9000n, 1000n), replica('b', 9000n, 5000n), replica('c', 100n, 100n)],
        required(2, 'a', 'b', 'c'),
      );
      expect(choice.ok && choice.candidate.name).toBe('b');
    });

    it('refuses unless n-k+1 standbys answered, saying why', () => {
      const choice = chooseFailoverCandidate(
        [{ name: 'pg-1', reachable: false, error: 'timeout' }, replica('pg-2', 8000n, 8000n)],
        required(1, 'pg-1', 'pg-2'),
      );
      expect(choice).toMatchObject({
        ok: false,
        reason:
          'only 1 of 2 synchronous standbys answered (pg-1 unreachable (timeout); pg-2 holds the highest received position 0/1F40, replay lag 0 bytes); ' +
          'commits were acknowledged by ANY 1 of 2 (pg-1, pg-2), so 2 of them must answer to be sure one holds every acknowledged commit',
      });
      expect(choice.verdicts.map((v) => v.eligible)).toEqual([false, false]);
      // ANY 2 of 3: two answers are enough, one of them holds every acknowledged commit.
      const two = chooseFailoverCandidate(
        [
          { name: 'pg-1', reachable: false, error: 'timeout' },
          replica('pg-2', 8000n, 8000n),
          replica('pg-3', 7000n, 7000n),
        ],
        required(2, 'pg-1', 'pg-2', 'pg-3'),
      );
      expect(two.ok && two.candidate.name).toBe('pg-2');
    });

    it('counts only the members of each list, and every list on record must be answered', () => {
      // pg-3 (not in the list) answering does not stand in for pg-1.
      const outsider = chooseFailoverCandidate(
        [
          { name: 'pg-1', reachable: false, error: 'timeout' },
          replica('pg-2', 8000n, 8000n),
          replica('pg-3', 8000n, 8000n),
        ],
        required(1, 'pg-1', 'pg-2'),
      );
      expect(outsider).toMatchObject({
        ok: false,
        reason: expect.stringMatching(/^only 1 of 2 synchronous/),
      });
      // Two lists on record (ANY 2 of three asked for, ANY 1 of three still counted): the older
      // needs all three to answer.
      const lists = {
        ...rules(9000n),
        quorums: [
          { number: 1, standbys: ['pg-1', 'pg-2', 'pg-3'] },
          { number: 2, standbys: ['pg-1', 'pg-2', 'pg-3'] },
        ],
      };
      const statuses = [replica('pg-1', 8000n, 8000n), replica('pg-2', 8000n, 8000n)];
      expect(
        chooseFailoverCandidate([...statuses, { name: 'pg-3', reachable: false, error: 'timeout' }], lists),
      ).toMatchObject({
        ok: false,
        reason: expect.stringContaining('ANY 1 of 3 (pg-1, pg-2, pg-3), so 3 of them'),
      });
      expect(chooseFailoverCandidate([...statuses, replica('pg-3', 9000n, 100n)], lists)).toMatchObject({
        ok: true,
        candidate: { name: 'pg-3' },
      });
    });
  });
});
