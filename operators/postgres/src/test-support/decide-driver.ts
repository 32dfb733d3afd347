// decide() driven probe by probe as the failover engine drives it (load the state, observe,
// decide, perform, save), every action succeeding, for the unit tests of whole sequences: a
// healthy primary, a change of the spec, a failure, the election.
import { decide, defaultPolicy, type Action, type FailoverPolicy } from '../failover/decide.ts';
import { sameState, settledState, type FailoverState } from '../failover/failover-state.ts';
import type { InstanceEndpoint } from '../instance/instance.ts';
import type { InstanceStatus, PrimaryStatus, StandbyConnection } from '../instance/observe.ts';
import { primary } from './instance-statuses.ts';

/** pg-0 … pg-<count-1> on one host. */
export const endpoints = (count: number): InstanceEndpoint[] =>
  Array.from({ length: count }, (_, i) => ({ name: `pg-${i}`, host: '10.0.0.1', port: 5432 + i }));

// A settle time of one probe interval keeps the sequences short; the rules do not depend on it.
const synchronous = (number: number, dataDurability: 'required' | 'preferred'): FailoverPolicy => ({
  ...defaultPolicy,
  reloadSettleMs: 1000,
  synchronous: { number, dataDurability },
});
export const required = (number: number): FailoverPolicy => synchronous(number, 'required');
export const preferred = (number: number): FailoverPolicy => synchronous(number, 'preferred');

/** A standby streaming from the primary, flushed up to `flushLsn`. */
export const standby = (name: string, flushLsn: bigint): StandbyConnection => ({
  applicationName: name,
  state: 'streaming',
  syncState: 'quorum',
  flushLsn,
  replayLsn: flushLsn,
});

/** pg-0 (or `name`) as the primary, running `names`, with these standbys streaming. */
export const primaryRunning = (
  names: string,
  currentLsn: bigint,
  standbys: StandbyConnection[],
  name = 'pg-0',
): PrimaryStatus => primary(name, currentLsn, { synchronousStandbyNames: names, standbys });

/** The engine's loop over decide(): observations one second apart, every action succeeding. */
export class DecideDriver {
  state: FailoverState = settledState('pg-0');
  now = 1_000_000;
  readonly actions: Action[] = [];
  readonly refusals: string[] = [];
  /** Probes whose next state differs from the one they loaded: a status write each. */
  writes = 0;

  probe(instances: InstanceEndpoint[], observed: InstanceStatus[], policy: FailoverPolicy, probes = 1): this {
    for (let i = 0; i < probes; i++) {
      const d = decide({ instances, observed, state: this.state, now: this.now, policy });
      this.actions.push(d.action);
      if (d.refusal) this.refusals.push(d.refusal.reason);
      if (!sameState(d.next, this.state)) this.writes++;
      this.state = d.next;
      this.now += 1000;
    }
    return this;
  }

  /** Drives a failover until something is promoted or `probes` ran out. */
  failOver(
    instances: InstanceEndpoint[],
    observed: InstanceStatus[],
    policy: FailoverPolicy,
    probes = 40,
  ): this {
    for (let i = 0; i < probes && this.promoted().length === 0; i++) this.probe(instances, observed, policy);
    return this;
  }

  promoted(): string[] {
    return this.actions.flatMap((a) => (a.type === 'promote' ? [a.instance] : []));
  }

  /** The synchronous_standby_names values the engine asked the primary to run, in order. */
  setNames(): string[] {
    return this.actions.flatMap((a) =>
      a.type === 'maintain' && a.synchronousStandbyNames !== undefined ? [a.synchronousStandbyNames] : [],
    );
  }
}
