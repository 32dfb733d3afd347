// An engine that dies at any step of a failover or a switchover is replaced by a new one that
// reads the same state and finishes the operation, promoting exactly once. Proven on real
// PostgreSQL processes: each "crash" is the store refusing to save (the step's action done, its
// next state lost) or the engine dying right after a save (the next action never started).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '@homeostat/testing';
import { TestCluster } from '../test-support/test-cluster.ts';
import {
  memoryStateStore,
  settledState,
  type FailoverState,
  type FailoverStateStore,
  type OperationStep,
} from './failover-state.ts';
import type { FailoverEngine } from './engine.ts';
import { observeInstance, type InstanceStatus } from '../instance/observe.ts';
import { defaultConnectOptions } from '../instance/instance.ts';

class OperatorCrash extends Error {
  override name = 'OperatorCrash';
}

type Step = OperationStep | 'settled';
type CrashMode = 'before-save' | 'after-save';

/** A durable store whose owner "dies" on the chosen save: the new state is lost, or kept. */
class CrashingStore implements FailoverStateStore {
  readonly durable: ReturnType<typeof memoryStateStore>;
  #crash: { step: Step; mode: CrashMode; from: string } | undefined;

  constructor(primary: string) {
    this.durable = memoryStateStore(settledState(primary));
  }

  /** The next save of a state at `step` (a settled state only once the primary has moved) crashes. */
  crashAt(step: Step, mode: CrashMode): void {
    this.#crash = { step, mode, from: this.durable.state.currentPrimary };
  }

  load = () => this.durable.load();

  async save(state: FailoverState): Promise<void> {
    const crash = this.#crash;
    const step: Step = state.operation?.step ?? 'settled';
    const hit = crash && step === crash.step && (step !== 'settled' || state.currentPrimary !== crash.from);
    if (!hit) return this.durable.save(state);
    this.#crash = undefined;
    if (crash.mode === 'after-save') await this.durable.save(state);
    throw new OperatorCrash(`operator killed ${crash.mode} of step ${step}`);
  }
}

const failoverSteps: Step[] = ['fencing', 'electing', 'promoting', 'routing', 'rejoining', 'settled'];
const switchoverSteps: Step[] = [
  'quiescing',
  'catching-up',
  'stopping',
  'promoting',
  'routing',
  'rejoining',
  'settled',
];

/** Each step, killed before and after its save (after the settled state's save nothing is left to crash). */
function crashPoints(steps: readonly Step[]): { step: Step; mode: CrashMode }[] {
  return steps.flatMap((step) =>
    (['before-save', 'after-save'] as const)
      .filter((mode) => !(step === 'settled' && mode === 'after-save'))
      .map((mode) => ({ step, mode })),
  );
}

/** Every instance, observed now. */
async function observeAllOf(cluster: TestCluster): Promise<InstanceStatus[]> {
  return Promise.all(
    cluster.endpoints.map((e) => observeInstance(e, cluster.bed.superuser, defaultConnectOptions)),
  );
}

async function timelineOf(cluster: TestCluster, name: string): Promise<number> {
  const status = await observeInstance(cluster.instance(name), cluster.bed.superuser, defaultConnectOptions);
  if (!status.reachable) throw new Error(`${name} is unreachable: ${status.error}`);
  return status.timeline;
}

/** Ticks a fresh engine until the operation it found (or starts) is over and the primary moved. */
async function resume(engine: FailoverEngine, oldPrimary: string, request?: () => Promise<unknown>) {
  await waitUntil(
    `the restarted engine finishes and ${oldPrimary} is no longer primary`,
    async () => {
      await engine.tick();
      if (!engine.state.operation && engine.primary === oldPrimary && request) await request();
      return !engine.state.operation && engine.primary !== oldPrimary;
    },
    { timeoutMs: 60_000, intervalMs: 100 },
  );
}

/** After an operation: one writer (the recorded primary, routed to), the others caught up as replicas. */
async function expectSettledOn(cluster: TestCluster, primary: string): Promise<void> {
  const writers = (await observeAllOf(cluster)).filter((s) => s.reachable && s.role === 'primary');
  expect(writers.map((s) => s.name)).toEqual([primary]);
  expect(cluster.router.upstream).toBe(primary);
  for (const e of cluster.endpoints) if (e.name !== primary) await cluster.waitCaughtUp(e.name, primary);
}

describe('a failover finished by a restarted engine, on real PostgreSQL 15 processes', () => {
  const cluster = new TestCluster({ size: 3, label: 'resume-failover' });
  beforeAll(() => cluster.start());
  afterAll(() => cluster.cleanup());

  it.each(crashPoints(failoverSteps))(
    'killed $mode of step $step: the new engine completes the failover with one promotion',
    async ({ step, mode }) => {
      const old = cluster.router.upstream ?? 'pg-0';
      const store = new CrashingStore(old);
      const timeline = await timelineOf(cluster, old);
      const eventsBefore = cluster.events.length;
      const first = cluster.engine({ primary: old, store });
      store.crashAt(step, mode);

      await cluster.instance(old).kill9();
      await expect(first.failover('test: primary killed')).rejects.toThrow(OperatorCrash);

      const second = cluster.engine({ primary: old, store });
      await resume(second, old);

      const primary = second.primary;
      expect(store.durable.state).toEqual(settledState(primary));
      const events = cluster.events.slice(eventsBefore);
      expect(events.filter((e) => e.type === 'promoted').map((e) => e.instance)).toEqual([primary]);
      expect(await timelineOf(cluster, primary)).toBe(timeline + 1);
      await expectSettledOn(cluster, primary);
    },
  );
});

describe('a switchover finished by a restarted engine, on real PostgreSQL 15 processes', () => {
  const cluster = new TestCluster({ size: 3, label: 'resume-switchover' });
  beforeAll(() => cluster.start());
  afterAll(() => cluster.cleanup());

  it.each(crashPoints(switchoverSteps))(
    'killed $mode of step $step: the new engine completes the switchover with one promotion and no lost row',
    async ({ step, mode }) => {
      const old = cluster.router.upstream ?? 'pg-0';
      const store = new CrashingStore(old);
      const target = cluster.endpoints.map((e) => e.name).find((n) => n !== old) ?? '';
      const timeline = await timelineOf(cluster, old);
      const eventsBefore = cluster.events.length;
      // A row acknowledged just before the switchover must be on the new primary.
      const [{ id } = { id: 0 }] = await cluster.sql<{ id: number }>(
        old,
        'INSERT INTO acked (id) SELECT coalesce(max(id), 0) + 1 FROM acked RETURNING id::int AS id',
      );

      const first = cluster.engine({ primary: old, store });
      store.crashAt(step, mode);
      await expect(first.switchover(target)).rejects.toThrow(OperatorCrash);

      // The request stands (in the operator it is spec.primary): a new engine asked again when
      // nothing was recorded, else carrying on what it finds.
      const second = cluster.engine({ primary: old, store });
      await resume(second, old, () => second.switchover(target));

      expect(second.primary).toBe(target);
      const events = cluster.events.slice(eventsBefore);
      expect(events.filter((e) => e.type === 'promoted').map((e) => e.instance)).toEqual([target]);
      expect(await timelineOf(cluster, target)).toBe(timeline + 1);
      expect(await cluster.ids(target)).toContain(id);
      await expectSettledOn(cluster, target);
      // The old primary rejoined as a plain replica, not left read-only.
      const [setting] = await cluster.sql<{ value: string }>(
        old,
        "SELECT current_setting('default_transaction_read_only') AS value",
      );
      expect(setting?.value).toBe('off');
    },
  );
});
