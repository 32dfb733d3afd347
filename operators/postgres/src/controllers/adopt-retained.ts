// The bootstrap of a cluster created again on claims an earlier cluster of the same name left
// (`storage.retention: Retain`, ADR 0211): every retained instance runs as a standby (no writes);
// once all of them answer and their positions hold still, the one whose data goes furthest is
// promoted, given the others' slots and the writes, and the others restart as its replicas (the
// entrypoint's rewind-or-clone brings back one that diverged). Each step is repeated safely by a
// turn that finds it done: a primary already among them is the one promoted before. A turn never
// waits: the positions a turn saw go back to the caller, and a later turn promotes once they held
// still long enough (the reconcile worker is not held while standbys replay).
import { observeAll } from '../failover/drive.ts';
import { settledState, type FailoverState, type FailoverStateStore } from '../failover/failover-state.ts';
import type { InstanceStatus } from '../instance/observe.ts';
import { perform, type EngineWorld } from '../failover/perform.ts';
import { chooseRetainedPrimary, positionsOf } from '../failover/retained-primary.ts';
import { desiredSynchronousStandbyNames, type SynchronousReplication } from '../instance/synchronous.ts';

/** The retained standbys' positions as a turn saw them, and when (a monotonic clock, in ms). */
export interface SeenPositions {
  readonly positions: ReadonlyMap<string, string>;
  readonly atMs: number;
}

export interface AdoptionTurn {
  readonly state: FailoverState | undefined;
  readonly observed: readonly InstanceStatus[];
  /** Why no primary was chosen yet, for the status. */
  readonly waiting?: string;
  /** For the next turn: the positions this one compared against (or saw first). */
  readonly seen?: SeenPositions;
}

export interface AdoptionOptions {
  /** What the previous turn returned as `seen`. */
  readonly previous?: SeenPositions;
  /**
   * How long the retained standbys' positions must hold still before the choice: a standby still
   * replaying its own WAL reports less than it holds. Default 1 s.
   */
  readonly settleMs?: number;
  readonly nowMs?: () => number;
}

const samePositions = (a: ReadonlyMap<string, string>, b: ReadonlyMap<string, string>) =>
  a.size === b.size && [...a].every(([name, position]) => b.get(name) === position);

/**
 * One turn of the adoption. `synchronous`: the cluster's synchronous replication, which the new
 * primary has from its first commit (under `required` a write waits for a standby, as after any
 * failover).
 */
export async function adoptRetained(
  world: EngineWorld,
  store: FailoverStateStore,
  retained: readonly string[],
  synchronous: SynchronousReplication | undefined,
  options: AdoptionOptions = {},
): Promise<AdoptionTurn> {
  const observed = await observeAll(world);
  const choice = chooseRetainedPrimary(observed, retained);
  if (!choice.ok) return { state: undefined, observed, waiting: choice.reason };
  const primary = choice.instance;
  if (!choice.promoted) {
    const settleMs = options.settleMs ?? 1000;
    const now = (options.nowMs ?? (() => performance.now()))();
    const positions = positionsOf(observed);
    const previous = options.previous;
    if (!previous || !samePositions(previous.positions, positions)) {
      return {
        state: undefined,
        observed,
        waiting: `the retained standbys' WAL positions must hold still for ${settleMs} ms (one still replaying reports less than it holds)`,
        seen: { positions, atMs: now },
      };
    }
    if (now - previous.atMs < settleMs) {
      return {
        state: undefined,
        observed,
        waiting: `the retained standbys' WAL positions must hold still for ${settleMs} ms (one still replaying reports less than it holds)`,
        seen: previous,
      };
    }
    const standbys = world.instances.map((i) => i.name).filter((name) => name !== primary);
    const synchronousStandbyNames = desiredSynchronousStandbyNames(synchronous, standbys, new Set());
    await perform({ type: 'promote', instance: primary, synchronousStandbyNames }, world);
    world.emit({
      type: 'promoted',
      instance: primary,
      message: `${primary} is primary: its data goes furthest (timeline, then WAL position) among the instances kept from the earlier cluster`,
    });
  }
  const others = world.instances.map((i) => i.name).filter((name) => name !== primary);
  await perform({ type: 'route', primary, slotsFor: others, repoint: [] }, world);
  // Restarted, they take the entrypoint's rejoin path: a standby merely behind follows, one on
  // another history is rewound (or re-cloned, a former primary's data kept aside).
  await perform({ type: 'rejoin', primary, instances: retained.filter((name) => name !== primary) }, world);
  const state = settledState(primary);
  await store.save(state);
  return { state, observed: await observeAll(world) };
}
