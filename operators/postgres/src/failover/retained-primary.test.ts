import { describe, expect, it } from 'vitest';
import type { InstanceStatus } from '../instance/observe.ts';
import { chooseRetainedPrimary } from './retained-primary.ts';

const standby = (name: string, timeline: number, replayLsn: bigint): InstanceStatus => ({
  name,
  reachable: true,
  role: 'replica',
  timeline,
  synchronousStandbyNames: '',
  receivedLsn: undefined,
  replayLsn,
  walReceiver: undefined,
  replayPaused: false,
});
const down = (name: string): InstanceStatus => ({ name, reachable: false, error: 'connection refused' });
const all = ['c-0', 'c-1', 'c-2'];

describe('chooseRetainedPrimary', () => {
  it('picks the latest timeline, then the furthest WAL position, never instance 0 by default', () => {
    expect(
      chooseRetainedPrimary([standby('c-0', 1, 900n), standby('c-1', 2, 500n), standby('c-2', 2, 400n)], all),
    ).toEqual({ ok: true, instance: 'c-1', promoted: false });
    expect(
      chooseRetainedPrimary([standby('c-0', 2, 100n), standby('c-1', 2, 100n), standby('c-2', 2, 300n)], all),
    ).toEqual({ ok: true, instance: 'c-2', promoted: false });
  });

  it('waits for every retained instance: the one not up may hold the furthest data', () => {
    const choice = chooseRetainedPrimary(
      [standby('c-0', 2, 100n), down('c-1'), standby('c-2', 2, 300n)],
      all,
    );
    expect(choice).toMatchObject({ ok: false, reason: expect.stringMatching(/^waiting for c-1 /) });
  });

  it('ignores instances whose claims were not retained (empty volumes that will clone)', () => {
    expect(chooseRetainedPrimary([standby('c-0', 2, 100n), down('c-1')], ['c-0'])).toEqual({
      ok: true,
      instance: 'c-0',
      promoted: false,
    });
  });

  it('keeps a primary an earlier turn promoted', () => {
    const primary: InstanceStatus = {
      name: 'c-2',
      reachable: true,
      role: 'primary',
      timeline: 3,
      synchronousStandbyNames: '',
      currentLsn: 700n,
      standbys: [],
    };
    expect(chooseRetainedPrimary([standby('c-0', 2, 100n), down('c-1'), primary], all)).toEqual({
      ok: true,
      instance: 'c-2',
      promoted: true,
    });
  });
});
