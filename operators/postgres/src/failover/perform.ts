// Carries out the failover engine's actions (decide.ts) on the instances, through SQL and the
// Fencing, Routing and InstanceActions the operator (or a test) provides. Each action is
// idempotent: an engine that restarts repeats the action of the step it finds in the state.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Fencing, InstanceActions, Routing } from './actions.ts';
import {
  alterSystem,
  checkReadOnly,
  dropSlots,
  ensureSlots,
  promote,
  quiesceWrites,
  repointStandby,
  type ControlTarget,
} from '../instance/control.ts';
import type { Action } from './decide.ts';
import {
  errorMessage,
  type ConnectOptions,
  type Credentials,
  type InstanceEndpoint,
} from '../instance/instance.ts';
import { formatLsn } from '../instance/lsn.ts';
import { observeInstance } from '../instance/observe.ts';
import type { EngineEvent } from './outcomes.ts';

/** Everything the actions reach: the instances and the world around them. */
export interface EngineWorld {
  readonly instances: readonly InstanceEndpoint[];
  readonly credentials: Credentials;
  readonly connect: ConnectOptions;
  readonly fencing: Fencing;
  readonly routing: Routing;
  readonly actions: InstanceActions;
  readonly emit: (event: EngineEvent) => void;
}

/** What an action learnt that the engine reports. */
export interface ActionResult {
  /** promote: the new primary's timeline. */
  readonly timeline?: number;
  /** rejoin: 'requested', or why an instance could not be asked to rejoin. */
  readonly rejoin?: string;
}

function endpoint(world: EngineWorld, name: string): InstanceEndpoint {
  const found = world.instances.find((i) => i.name === name);
  if (!found) throw new Error(`unknown instance '${name}'`);
  return found;
}

function control(world: EngineWorld, name: string): ControlTarget {
  return { endpoint: endpoint(world, name), credentials: world.credentials, options: world.connect };
}

function emit(world: EngineWorld, type: EngineEvent['type'], instance: string, message: string): void {
  world.emit({ type, instance, message });
}

/**
 * A change the settled engine makes on the primary: done, it is reported as `done` says; failed,
 * as a Warning, and the next probe decides again (the maintain step finds it still missing).
 */
async function changeOnPrimary(
  world: EngineWorld,
  primary: string,
  change: (target: ControlTarget) => Promise<void>,
  done: { readonly type: EngineEvent['type']; readonly message: string },
): Promise<void> {
  try {
    await change(control(world, primary));
    emit(world, done.type, primary, done.message);
  } catch (error) {
    emit(world, 'warning', primary, errorMessage(error));
  }
}

/** Re-points each replica at `primary`; a replica that cannot be reached is left to the next probe. */
async function repointAll(world: EngineWorld, names: readonly string[], primary: string): Promise<void> {
  const upstream = endpoint(world, primary);
  await Promise.all(
    names.map(async (name) => {
      try {
        if (await repointStandby(control(world, name), upstream)) {
          emit(world, 'repointed', name, `${name} now streams from ${primary}`);
        }
      } catch (error) {
        emit(world, 'warning', name, errorMessage(error));
      }
    }),
  );
}

/** Clears a switchover's quiesce on `name`, then routes writes to it again; throws when it did not. */
async function giveWritesBack(world: EngineWorld, name: string): Promise<void> {
  await alterSystem(control(world, name), { default_transaction_read_only: null });
  await world.routing.routeWritesTo(endpoint(world, name));
}

/** How long a new session may still see the configuration file's value after pg_reload_conf(). */
const reloadReachesSessionsMs = 5000;

/**
 * Whether `name` takes writes in a new session once the quiesce is cleared: 'off', or the source
 * of the default_transaction_read_only that keeps it read-only. The reload reaches new sessions a
 * moment after pg_reload_conf() returns, so a value still from the configuration file is asked again.
 */
async function stillReadOnly(world: EngineWorld, name: string): Promise<string | undefined> {
  const deadline = Date.now() + reloadReachesSessionsMs;
  for (;;) {
    const check = await checkReadOnly(control(world, name));
    if (!check.readOnly) return undefined;
    if (check.source !== 'configuration file' || Date.now() >= deadline) return check.source;
    await sleep(50);
  }
}

/** Where a default_transaction_read_only of this pg_settings source is set, for the warning. */
function readOnlyCause(source: string, user: string): string {
  switch (source) {
    case 'user':
      return `a setting of the role ${user} (ALTER ROLE ... SET default_transaction_read_only)`;
    case 'database':
      return 'a setting of the database (ALTER DATABASE ... SET default_transaction_read_only)';
    case 'database user':
      return `a setting of the role ${user} in the database (ALTER ROLE ... IN DATABASE ... SET default_transaction_read_only)`;
    default:
      return `a setting whose source is '${source}'`;
  }
}

/** Performs `action`; throws (with the instance and step in the message) when it did not happen. */
export async function perform(action: Action, world: EngineWorld): Promise<ActionResult> {
  switch (action.type) {
    case 'none':
    case 'wait':
      return {};
    case 'maintain': {
      if (action.giveWritesBack) {
        try {
          await giveWritesBack(world, action.primary);
          const source = await stillReadOnly(world, action.primary);
          if (source === undefined) {
            emit(
              world,
              'writes-restored',
              action.primary,
              `${action.primary} was read-only with no switchover in progress (a switchover's quiesce not undone); it takes writes again`,
            );
          } else {
            emit(
              world,
              'still-read-only',
              action.primary,
              `${action.primary} is still read-only after the operator reset default_transaction_read_only: it comes from ${readOnlyCause(source, world.credentials.user)}, which the operator does not own; find it with SELECT r.rolname, d.datname, s.setconfig FROM pg_db_role_setting s LEFT JOIN pg_roles r ON r.oid = s.setrole LEFT JOIN pg_database d ON d.oid = s.setdatabase (psql: \\drds) and RESET it`,
            );
          }
        } catch (error) {
          emit(
            world,
            'warning',
            action.primary,
            `could not give writes back to ${action.primary}: ${errorMessage(error)}; the next probe tries again`,
          );
        }
      }
      const { createSlots, dropSlots: removedSlots, synchronousStandbyNames: names } = action;
      if (createSlots) {
        await changeOnPrimary(world, action.primary, (target) => ensureSlots(target, createSlots), {
          type: 'slots-created',
          message: `made the replication slots of ${createSlots.join(', ')} on ${action.primary} again: they ran without one`,
        });
      }
      await repointAll(world, action.repoint, action.primary);
      if (removedSlots) {
        await changeOnPrimary(world, action.primary, (target) => dropSlots(target, removedSlots), {
          type: 'slots-dropped',
          message: `dropped the replication slots of removed instances: ${removedSlots.join(', ')}`,
        });
      }
      if (names !== undefined) {
        await changeOnPrimary(
          world,
          action.primary,
          (target) => alterSystem(target, { synchronous_standby_names: names }),
          { type: 'synchronous-standbys', message: `synchronous_standby_names = '${names}'` },
        );
      }
      return {};
    }
    case 'fence': {
      const target = endpoint(world, action.instance);
      await world.routing.withdrawWrites(target);
      await world.fencing.fence(target);
      emit(world, 'fenced', action.instance, `${action.instance} is fenced`);
      return {};
    }
    case 'quiesce': {
      await world.routing.withdrawWrites(endpoint(world, action.instance));
      await quiesceWrites(control(world, action.instance));
      return {};
    }
    case 'undo-quiesce': {
      // Not thrown: the switchover is over either way. A primary this leaves read-only is found so
      // by the next probe, whose maintenance gives writes back (decide.ts, giveWritesBack).
      try {
        await giveWritesBack(world, action.instance);
      } catch (error) {
        emit(
          world,
          'warning',
          action.instance,
          `could not give writes back to ${action.instance}: ${errorMessage(error)}; the next probe tries again`,
        );
      }
      return {};
    }
    case 'stop': {
      const target = endpoint(world, action.instance);
      await world.actions.stopCleanly(target);
      await world.fencing.fence(target);
      const at = action.lastLsn === undefined ? '' : ` after its last write at ${formatLsn(action.lastLsn)}`;
      emit(world, 'fenced', action.instance, `${action.instance} stopped cleanly${at}`);
      return {};
    }
    case 'promote': {
      const target = control(world, action.instance);
      await alterSystem(target, {
        default_transaction_read_only: null,
        synchronous_standby_names: action.synchronousStandbyNames,
      });
      await promote(target, 60);
      const promoted = await observeInstance(target.endpoint, world.credentials, world.connect);
      return promoted.reachable ? { timeline: promoted.timeline } : {};
    }
    case 'route': {
      try {
        await ensureSlots(control(world, action.primary), action.slotsFor);
      } catch (error) {
        emit(world, 'warning', action.primary, errorMessage(error));
      }
      await repointAll(world, action.repoint, action.primary);
      await world.routing.routeWritesTo(endpoint(world, action.primary));
      emit(world, 'routed', action.primary, `writes go to ${action.primary}`);
      return {};
    }
    case 'rejoin': {
      const primary = endpoint(world, action.primary);
      const problems: string[] = [];
      for (const name of action.instances) {
        try {
          await world.actions.rejoinAsReplica(endpoint(world, name), primary);
          emit(world, 'rejoin-requested', name, `${name} restarts as a replica of ${action.primary}`);
        } catch (error) {
          const problem = `could not ask ${name} to rejoin: ${errorMessage(error)}`;
          problems.push(problem);
          emit(world, 'warning', name, problem);
        }
      }
      return { rejoin: problems.length ? problems.join('; ') : 'requested' };
    }
  }
}
