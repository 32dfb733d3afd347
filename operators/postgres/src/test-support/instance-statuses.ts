// Instance statuses as the engine observes them, for the unit tests of its decisions: a primary,
// a replica (optionally streaming from a port on 10.0.0.1), an instance that does not answer.
import type { InstanceStatus, PrimaryStatus, ReplicaStatus } from '../instance/observe.ts';

export function primary(name: string, lsn: bigint, extra: Partial<PrimaryStatus> = {}): PrimaryStatus {
  return {
    name,
    reachable: true,
    role: 'primary',
    timeline: 1,
    synchronousStandbyNames: '',
    currentLsn: lsn,
    standbys: [],
    ...extra,
  };
}

export function replica(
  name: string,
  lsn: bigint,
  streamingFrom?: number,
  extra: Partial<ReplicaStatus> = {},
) {
  const status: ReplicaStatus = {
    name,
    reachable: true,
    role: 'replica',
    timeline: 1,
    synchronousStandbyNames: '',
    receivedLsn: lsn,
    replayLsn: lsn,
    replayPaused: false,
    walReceiver:
      streamingFrom === undefined
        ? undefined
        : { status: 'streaming', senderHost: '10.0.0.1', senderPort: streamingFrom },
    ...extra,
  };
  return status;
}

export const down = (name: string): InstanceStatus => ({
  name,
  reachable: false,
  error: 'connect ECONNREFUSED',
});
