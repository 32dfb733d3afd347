// Which instance becomes the primary of a cluster created again on claims kept from an earlier one
// (`storage.retention: Retain`). That cluster's failover state went with its status, so nothing
// says which instance was primary; every retained instance starts as a standby (the entrypoint's
// PG_RETAINED) and the one whose data goes furthest is promoted (ADR 0211).
import { formatLsn, type Lsn } from '../instance/lsn.ts';
import { replicaPosition, type InstanceStatus, type ReplicaStatus } from '../instance/observe.ts';

export type RetainedChoice =
  /** `instance` is to be promoted (a standby) or already is the primary (an earlier turn promoted it). */
  | { readonly ok: true; readonly instance: string; readonly promoted: boolean }
  | { readonly ok: false; readonly reason: string };

/** Timeline first (a later timeline holds a history the earlier ones lack), then WAL position. */
function ahead(a: ReplicaStatus, b: ReplicaStatus): boolean {
  if (a.timeline !== b.timeline) return a.timeline > b.timeline;
  const pa = replicaPosition(a) ?? 0n;
  const pb = replicaPosition(b) ?? 0n;
  return pa !== pb ? pa > pb : a.name < b.name;
}

/**
 * Chooses among `observed` the instance to promote, looking only at `retained` (the instances
 * whose claims held data before this cluster existed). Every one of them must answer as a standby
 * that replayed WAL: one that is not up yet may hold the furthest data, and promoting another
 * would leave its extra commits to a rewind. A primary already among them was promoted by an
 * earlier turn that stopped before saving the state; it is kept.
 */
export function chooseRetainedPrimary(
  observed: readonly InstanceStatus[],
  retained: readonly string[],
): RetainedChoice {
  const of = observed.filter((s) => retained.includes(s.name));
  const primaries = of.filter((s) => s.reachable && s.role === 'primary');
  if (primaries.length === 1 && primaries[0])
    return { ok: true, instance: primaries[0].name, promoted: true };
  if (primaries.length > 1) {
    return {
      ok: false,
      reason: `several retained instances accept writes: ${primaries.map((p) => p.name).join(', ')}`,
    };
  }
  const waiting = retained.filter((name) => {
    const s = of.find((o) => o.name === name);
    return !(s?.reachable && s.role === 'replica' && replicaPosition(s) !== undefined);
  });
  if (waiting.length) {
    return {
      ok: false,
      reason: `waiting for ${waiting.join(', ')} (data kept from an earlier cluster of this name) to start as a standby before choosing the primary`,
    };
  }
  let best: ReplicaStatus | undefined;
  for (const s of of) {
    if (s.reachable && s.role === 'replica' && (!best || ahead(s, best))) best = s;
  }
  return best
    ? { ok: true, instance: best.name, promoted: false }
    : { ok: false, reason: 'no retained instance' };
}

/** Each retained standby's position, to tell whether replay of its own WAL has ended. */
export function positionsOf(observed: readonly InstanceStatus[]): ReadonlyMap<string, string> {
  const positions = new Map<string, string>();
  for (const s of observed) {
    if (!s.reachable || s.role !== 'replica') continue;
    const lsn: Lsn | undefined = replicaPosition(s);
    positions.set(s.name, `${s.timeline}/${lsn === undefined ? '-' : formatLsn(lsn)}`);
  }
  return positions;
}
