import { describeQuorum, type CommitQuorum } from './commit-quorums.ts';
import { formatLsn, maxLsn, type Lsn } from '../instance/lsn.ts';
import { replicaPosition, type InstanceStatus, type ReplicaStatus } from '../instance/observe.ts';

/** Why each instance was or was not fit to become the primary. */
export interface CandidateVerdict {
  readonly name: string;
  readonly eligible: boolean;
  readonly reason: string;
}

export type CandidateChoice =
  | { readonly ok: true; readonly candidate: ReplicaStatus; readonly verdicts: readonly CandidateVerdict[] }
  | { readonly ok: false; readonly reason: string; readonly verdicts: readonly CandidateVerdict[] };

/** What makes a replica fit to be promoted. */
export interface CandidateRules {
  /** The old primary's last observed LSN, when known. */
  readonly lastKnownPrimaryLsn: Lsn | undefined;
  /** Without a quorum: a replica that replayed further than this behind is not promoted. */
  readonly maxLagBytes: bigint;
  /**
   * The synchronous standby lists commits may have been acknowledged under (dataDurability
   * `required`): with any, only a standby holding the highest received position may be promoted.
   */
  readonly quorums?: readonly CommitQuorum[];
}

/**
 * Picks the replica to promote among `statuses` (the old primary's standbys still in the running).
 * With an acknowledging quorum, see `chooseHolderOfAcknowledged`. Without one: reachable, in
 * recovery, replayed WAL within `maxLagBytes` of the furthest position known (the old primary's
 * last observed LSN or any replica's received LSN); then the highest received LSN, then the
 * highest replay LSN, then the name.
 */
export function chooseFailoverCandidate(
  statuses: readonly InstanceStatus[],
  rules: CandidateRules,
): CandidateChoice {
  const quorums = (rules.quorums ?? []).filter((q) => Math.min(q.number, q.standbys.length) > 0);
  if (quorums.length > 0) return chooseHolderOfAcknowledged(statuses, quorums);
  let reference = rules.lastKnownPrimaryLsn;
  for (const s of statuses) {
    if (s.reachable && s.role === 'replica') reference = maxLsn(reference, replicaPosition(s));
  }
  const verdicts: CandidateVerdict[] = [];
  const eligible: ReplicaStatus[] = [];
  for (const s of statuses) {
    if (!s.reachable || s.role !== 'replica') {
      verdicts.push({ name: s.name, eligible: false, reason: notAReplica(s) });
    } else if (s.replayLsn === undefined) {
      verdicts.push({ name: s.name, eligible: false, reason: 'has not replayed any WAL yet' });
    } else {
      const lag = reference === undefined ? 0n : reference - s.replayLsn;
      if (lag > rules.maxLagBytes) {
        verdicts.push({
          name: s.name,
          eligible: false,
          reason: `replayed ${formatLsn(s.replayLsn)}, ${lag} bytes behind ${formatLsn(reference ?? 0n)} (bound ${rules.maxLagBytes} bytes)`,
        });
      } else {
        verdicts.push({ name: s.name, eligible: true, reason: `lag ${lag} bytes` });
        eligible.push(s);
      }
    }
  }
  return chosen(eligible, verdicts);
}

const notAReplica = (s: InstanceStatus): string =>
  s.reachable ? 'is not a replica (it accepts writes)' : `unreachable (${s.error})`;

/**
 * Under dataDurability `required` a commit acknowledged under a list is on at least `number` of
 * its `standbys`, so once `standbys - number + 1` of them answer, one of those holds it; with every
 * list that may have acknowledged commits answered so, the standbys holding the highest received
 * position hold every acknowledged commit. Only such a standby may win: promotion replays all it
 * received first, so replay lag only orders the winners.
 */
function chooseHolderOfAcknowledged(
  statuses: readonly InstanceStatus[],
  quorums: readonly CommitQuorum[],
): CandidateChoice {
  const holds = (s: InstanceStatus): Lsn | undefined =>
    s.reachable && s.role === 'replica' ? replicaPosition(s) : undefined;
  const answered = statuses.filter((s): s is ReplicaStatus => holds(s) !== undefined);
  const highest = answered.reduce<Lsn>((max, s) => maxLsn(max, holds(s)) ?? max, 0n);
  const short = quorums.flatMap((quorum) => {
    const k = Math.min(quorum.number, quorum.standbys.length);
    const needed = quorum.standbys.length - k + 1;
    const members = answered.filter((s) => quorum.standbys.includes(s.name)).length;
    return members >= needed ? [] : [{ quorum, k, needed, members }];
  });
  const enough = short.length === 0;
  const verdicts: CandidateVerdict[] = [];
  const eligible: ReplicaStatus[] = [];
  for (const s of statuses) {
    const position = holds(s);
    if (!s.reachable || s.role !== 'replica') {
      verdicts.push({ name: s.name, eligible: false, reason: notAReplica(s) });
    } else if (position === undefined) {
      verdicts.push({ name: s.name, eligible: false, reason: 'holds no WAL yet' });
    } else if (position < highest) {
      verdicts.push({
        name: s.name,
        eligible: false,
        reason: `holds ${formatLsn(position)}, less than ${formatLsn(highest)} received by another standby (acknowledged commits may be missing)`,
      });
    } else {
      const lag = highest - (s.replayLsn ?? 0n);
      const reason = `holds the highest received position ${formatLsn(highest)}, replay lag ${lag} bytes`;
      verdicts.push({ name: s.name, eligible: enough, reason });
      if (enough) eligible.push(s);
    }
  }
  const [first] = short;
  if (first) {
    const why = verdicts.map((v) => `${v.name} ${v.reason}`).join('; ');
    const { quorum, k, needed, members } = first;
    const reason =
      `only ${members} of ${quorum.standbys.length} synchronous standbys answered${why ? ` (${why})` : ''}; ` +
      `commits were acknowledged by ${describeQuorum({ ...quorum, number: k })}, so ${needed} of them must answer ` +
      `to be sure one holds every acknowledged commit`;
    return { ok: false, reason, verdicts };
  }
  return chosen(eligible, verdicts);
}

function chosen(eligible: ReplicaStatus[], verdicts: readonly CandidateVerdict[]): CandidateChoice {
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
