import { describe, expect, it } from 'vitest';
import { chooseFailoverCandidate } from './candidate.ts';
import type { InstanceStatus, ReplicaStatus } from './observe.ts';

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

describe('choosing the replica to promote', () => {
  it('prefers the highest received LSN, then the highest replay LSN, then the name', () => {
    const pick = (statuses: InstanceStatus[]) => {
      const choice = chooseFailoverCandidate(statuses, undefined, bound);
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
      9000n,
      bound,
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
      4000n,
      bound,
    );
    expect(choice.verdicts.map((v) => v.reason)).toEqual([
      'lag 0 bytes',
      'replayed 0/BB8, 2000 bytes behind 0/1388 (bound 1000 bytes)',
    ]);
  });

  it('explains a refusal instance by instance', () => {
    const choice = chooseFailoverCandidate(
      [{ name: 'pg-1', reachable: false, error: 'timeout' }, replica('pg-2', undefined, undefined)],
      100n,
      bound,
    );
    expect(choice).toMatchObject({
      ok: false,
      reason: 'no eligible replica: pg-1 unreachable (timeout); pg-2 has not replayed any WAL yet',
    });
    expect(chooseFailoverCandidate([], 100n, bound)).toMatchObject({
      ok: false,
      reason: 'no eligible replica: no replicas',
    });
  });
});
