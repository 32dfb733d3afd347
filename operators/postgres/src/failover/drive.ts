// Runs the failover engine's steps: load the state, observe every instance, decide, perform the
// action, save the next state; again, until the cluster is settled (healthy, or waiting out the
// failover delay), an operation completes, or a step is refused. Stateless between calls: all it
// needs to continue is in the store, so any process may call it, after a crash of another.
import { setTimeout as sleep } from 'node:timers/promises';
import { decide, type FailoverPolicy } from './decide.ts';
import { sameState, type FailoverState, type FailoverStateStore, type Operation } from './failover-state.ts';
import { errorMessage } from '../instance/instance.ts';
import type { Lsn } from '../instance/lsn.ts';
import { observeInstance, type InstanceStatus } from '../instance/observe.ts';
import type { CandidateVerdict } from './candidate.ts';
import type { EngineOutcome, Refusal, RefusalCode } from './outcomes.ts';
import { perform, type EngineWorld } from './perform.ts';

export interface StepRun {
  readonly world: EngineWorld;
  readonly store: FailoverStateStore;
  readonly policy: FailoverPolicy;
  /** The instance that should be primary; a switchover starts when it is not. */
  readonly desiredPrimary?: string;
  /** Start a failover now (when none is in progress), for this reason. */
  readonly failoverNow?: string;
  /** The primary's last WAL position seen by the caller (kept in memory between runs). */
  readonly lastPrimaryLsn?: Lsn;
  /** Observed statuses for the first step, when the caller has just observed (saves a round). */
  readonly observed?: readonly InstanceStatus[];
}

export interface StepRunResult {
  readonly state: FailoverState;
  /** The completed promotion, or the refusal that stopped the run. */
  readonly outcome?: EngineOutcome;
  /** The last observation (for status reporting). */
  readonly observed: readonly InstanceStatus[];
  /** The primary's WAL position, when it was seen healthy. */
  readonly lastPrimaryLsn?: Lsn;
  /** When settled but waiting (the failover delay): how long until a new run may act. */
  readonly retryAfterMs?: number;
}

/**
 * Observes every instance once, in parallel; never throws. Instances in `skip` are reported
 * unreachable without a connection: a fenced instance answers nothing by the fence's own check,
 * and trying costs a whole connect timeout when it was cut off, at every step of a failover.
 */
export function observeAll(
  world: EngineWorld,
  skip: ReadonlySet<string> = new Set(),
): Promise<InstanceStatus[]> {
  return Promise.all(
    world.instances.map((i): Promise<InstanceStatus> =>
      skip.has(i.name)
        ? Promise.resolve({ name: i.name, reachable: false, error: 'fenced: not observed' })
        : observeInstance(i, world.credentials, world.connect),
    ),
  );
}

const stepsAfterElection: ReadonlySet<Operation['step']> = new Set([
  'reinstating',
  'promoting',
  'routing',
  'rejoining',
]);

/**
 * The instances a step need not observe: those fenced already (but an old primary being brought
 * back, from the step that waits for it to answer on), and the primary a failover is about to
 * fence (the fencing step acts on it whatever it answers).
 */
function notObserved(state: FailoverState): ReadonlySet<string> {
  const operation = state.operation;
  if (!operation) return new Set();
  if (stepsAfterElection.has(operation.step)) {
    return new Set(operation.fenced.filter((name) => name !== state.targetPrimary));
  }
  const fencing = operation.kind === 'failover' && operation.step === 'fencing';
  return new Set([...operation.fenced, ...(fencing ? [state.currentPrimary] : [])]);
}

/** Runs steps until settled, complete or refused (see the file comment). */
export async function runSteps(run: StepRun): Promise<StepRunResult> {
  const { world, store, policy } = run;
  let state = await store.load();
  let lastPrimaryLsn = run.lastPrimaryLsn;
  let failoverNow = run.failoverNow;
  let observed = run.observed;
  let verdicts: readonly CandidateVerdict[] = [];
  let timeline: number | undefined;
  let rejoin = 'requested';

  const save = async (next: FailoverState, completed?: Operation['kind']) => {
    if (!sameState(next, state)) await store.save(next, completed);
    state = next;
  };
  const refusal = (code: RefusalCode, reason: string): Refusal => {
    const kind = state.operation?.kind ?? (run.desiredPrimary !== undefined ? 'switchover' : 'failover');
    world.emit({ type: 'refused', message: `${kind} refused (${code}): ${reason}` });
    return { outcome: 'refused', kind, code, reason };
  };

  for (;;) {
    const statuses = observed ?? (await observeAll(world, notObserved(state)));
    observed = undefined;
    const primary = statuses.find((s) => s.name === state.currentPrimary);
    if (!state.operation && primary?.reachable && primary.role === 'primary')
      lastPrimaryLsn = primary.currentLsn;
    const operation = state.operation;
    const decision = decide({
      instances: world.instances,
      observed: statuses,
      state,
      now: Date.now(),
      policy,
      ...(run.desiredPrimary === undefined ? {} : { desiredPrimary: run.desiredPrimary }),
      ...(failoverNow === undefined ? {} : { failoverNow }),
      ...(lastPrimaryLsn === undefined ? {} : { lastPrimaryLsn }),
    });
    failoverNow = undefined;
    for (const event of decision.events) world.emit(event);
    if (decision.verdicts) verdicts = decision.verdicts;
    const base = { state, observed: statuses, ...(lastPrimaryLsn === undefined ? {} : { lastPrimaryLsn }) };

    try {
      const performedAt = Date.now();
      const result = await perform(decision.action, world);
      const nextStep = decision.next.operation?.step;
      if (operation && nextStep !== operation.step) {
        // Once per step (not per wait within it): where the seconds of an operation go.
        const now = Date.now();
        world.emit({
          type: 'step',
          instance: state.targetPrimary,
          message: `${operation.kind} step ${operation.step} done in ${now - operation.stepStartedAt} ms (its ${decision.action.type} action ${now - performedAt} ms), next ${nextStep ?? 'none'}; ${now - operation.startedAt} ms since the ${operation.kind} started`,
        });
      }
      if (decision.action.type === 'promote') {
        timeline = result.timeline;
        world.emit({
          type: 'promoted',
          instance: decision.action.instance,
          message: `${decision.action.instance} promoted (${operation?.kind ?? 'failover'}, timeline ${timeline ?? '?'}), replacing ${state.currentPrimary}`,
        });
      }
      if (result.rejoin !== undefined) rejoin = result.rejoin;
    } catch (error) {
      const failure = decision.onFailure;
      if (failure?.action) await perform(failure.action, world).catch(() => undefined);
      if (failure?.next) await save(failure.next);
      const outcome = refusal(
        failure?.code ?? 'promotion-failed',
        (failure?.reason ?? String)(errorMessage(error)),
      );
      return { ...base, state, outcome };
    }
    // An operation that ends on the primary it started from (brought back) replaced nobody: not counted.
    const replaced = operation !== undefined && !operation.fenced.includes(state.currentPrimary);
    const reinstated = decision.completes === true && operation !== undefined && !replaced;
    await save(decision.next, decision.completes && operation && replaced ? operation.kind : undefined);
    if (decision.refusal) {
      return { ...base, state, outcome: refusal(decision.refusal.code, decision.refusal.reason) };
    }
    if (decision.completes && operation) {
      const newPrimary = state.currentPrimary;
      const seen = statuses.find((s) => s.name === newPrimary);
      // A standby's timeline is the one it streams from: only the primary's own answer counts.
      const seenTimeline = seen?.reachable && seen.role === 'primary' ? seen.timeline : undefined;
      if (reinstated) {
        const durationMs = Date.now() - operation.startedAt;
        return {
          ...base,
          state,
          outcome: {
            outcome: 'reinstated',
            kind: operation.kind,
            primary: newPrimary,
            timeline: seenTimeline,
            durationMs,
          },
        };
      }
      return {
        ...base,
        state,
        outcome: {
          outcome: 'promoted',
          kind: operation.kind,
          oldPrimary: operation.fenced[0] ?? newPrimary,
          newPrimary,
          timeline: timeline ?? seenTimeline,
          verdicts,
          durationMs: Date.now() - operation.startedAt,
          rejoin,
        },
      };
    }
    if (!state.operation || decision.yields) {
      const wait = decision.action.type === 'wait' ? decision.action.retryAfterMs : undefined;
      return { ...base, state, ...(wait === undefined ? {} : { retryAfterMs: wait }) };
    }
    if (decision.action.type === 'wait') await sleep(decision.action.retryAfterMs);
  }
}
