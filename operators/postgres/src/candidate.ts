import { formatLsn, maxLsn, type Lsn } from './lsn.ts';
import { replicaPosition, type InstanceStatus, type ReplicaStatus } from './observe.ts';

/** Why each instance was or was not fit to become the primary. */
export interface CandidateVerdict {
  readonly name: string;
  readonly eligible: boolean;
  readonly reason: string;
}

export type CandidateChoice =
  | { readonly ok: true; readonly candidate: ReplicaStatus; readonly verdicts: readonly CandidateVerdict[] }
  | { readonly ok: false; readonly reason: string; readonly verdicts: readonly CandidateVerdict[] };

/**
 * Picks the replica to promote: reachable, in recovery, replayed WAL within `maxLagBytes` of the
 * furthest position known (the old primary's last observed LSN or any replica's received LSN);
 * then the highest received LSN, then the highest replay LSN, then the name.
 */
export function chooseFailoverCandidate(
  statuses: readonly InstanceStatus[],
  lastKnownPrimaryLsn: Lsn | undefined,
  maxLagBytes: bigint,
): CandidateChoice {
  let reference = lastKnownPrimaryLsn;
  for (const s of statuses) {
    if (s.reachable && s.role === 'replica') reference = maxLsn(reference, replicaPosition(s));
  }
  const verdicts: CandidateVerdict[] = [];
  const eligible: ReplicaStatus[] = [];
  for (const s of statuses) {
    if (!s.reachable) {
      verdicts.push({ name: s.name, eligible: false, reason: `unreachable (${s.error})` });
    } else if (s.role !== 'replica') {
      verdicts.push({ name: s.name, eligible: false, reason: 'is not a replica (it accepts writes)' });
    } else if (s.replayLsn === undefined) {
      verdicts.push({ name: s.name, eligible: false, reason: 'has not replayed any WAL yet' });
    } else {
      const lag = reference === undefined ? 0n : reference - s.replayLsn;
      if (lag > maxLagBytes) {
        verdicts.push({
          name: s.name,
          eligible: false,
          reason: `replayed ${formatLsn(s.replayLsn)}, ${lag} bytes behind ${formatLsn(reference ?? 0n)} (bound ${maxLagBytes} bytes)`,
        });
      } else {
        verdicts.push({ name: s.name, eligible: true, reason: `lag ${lag} bytes` });
        eligible.push(s);
      }
    }
  }
  eligible.sort(compareCandidates);
  const candidate = eligible[0];
  if (!candidate) {
    const why = verdicts.map((v) => `${v.name} ${v.reason}`).join('; ');
    return { ok: false, reason: `no eligible replica: ${why || 'no replicas'}`, verdicts };
  }
  return { ok: true, candidate, verdicts };
}

const compareLsnDesc = (a: Lsn | undefined, b: Lsn | undefined): number => {
  const x = a ?? -1n;
  const y = b ?? -1n;
  return x === y ? 0 : x > y ? -1 : 1;
};

/** Most advanced first: received LSN, then replay LSN, then name (stable, so runs repeat). */
export function compareCandidates(a: ReplicaStatus, b: ReplicaStatus): number {
  return (
    compareLsnDesc(a.receivedLsn, b.receivedLsn) ||
    compareLsnDesc(a.replayLsn, b.replayLsn) ||
    (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)
  );
}
