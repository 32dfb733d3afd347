// What `fence` and `unfence` ask the PostgreSQL operator for: the cluster annotation that lists the
// fenced instances, its new value computed from the current one. Pure; the command reads and writes.
import { UsageError } from './kinds.ts';
import { byInstanceName } from './postgres-instances.ts';

/**
 * The PostgreSQLCluster annotation the PostgreSQL operator reads for fencing by request: a JSON
 * array of instance names, or ["*"] for every instance; absent or [] fences nothing. The plugin is
 * bundled alone, so it keeps this copy; a test of the operator holds it equal to the operator's.
 */
export const fencedInstancesAnnotation = 'postgres.homeostat.dev/fencedInstances';

/** The annotation (value "true") the operator makes a fenced instance's pod with. */
export const fencedPodAnnotation = 'postgres.homeostat.dev/fenced';

/** The annotation's word for every instance of the cluster. */
const everyInstance = '*';

/** What the user asked: fence or unfence these instances, or all of them. */
export interface FenceRequest {
  action: 'fence' | 'unfence';
  instances: readonly string[] | 'all';
}

/** The instances fenced: every one (`*`), or those named, sorted, each once. */
type Fenced = '*' | readonly string[];

export interface FenceChange {
  /** The annotation's new value, or null: remove it (nothing fenced). */
  value: string | null;
  /** Whether the request changes which instances are fenced (if not, nothing is written). */
  changed: boolean;
  /** Whether `*` was replaced by the other instances' names, to unfence one while the rest stay fenced. */
  spelledOut: boolean;
}

/** The instances the annotation's `value` names; throws, naming the annotation and the value, if it is not a JSON array of names. */
export function parseFencedInstances(value: string | undefined): Fenced {
  if (value === undefined) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    parsed = undefined;
  }
  if (!Array.isArray(parsed) || !parsed.every((n): n is string => typeof n === 'string' && n !== ''))
    throw new Error(
      `the annotation ${fencedInstancesAnnotation} is ${JSON.stringify(value)}, not a JSON array of instance names ` +
        `(e.g. ["accounts-1"] or ["*"]); nothing was written: correct or remove it by hand first`,
    );
  return parsed.includes(everyInstance) ? everyInstance : sortedOnce(parsed);
}

function sortedOnce(names: readonly string[]): string[] {
  return [...new Set(names)].sort(byInstanceName);
}

/** Refuses names that are not instances of the cluster, listing its instances. */
function checkInstances(cluster: string, named: readonly string[], instances: readonly string[]): void {
  const unknown = named.filter((n) => !instances.includes(n));
  if (unknown.length === 0) return;
  const its = instances.length > 0 ? `its instances: ${instances.join(', ')}` : 'it has no instances';
  throw new UsageError(
    `${unknown.join(', ')}: not an instance of ${cluster} (${its}; every instance: --all)`,
  );
}

/**
 * The annotation's new value after `request`, from its `current` value and the cluster's
 * `instances`. Unfencing one instance while `*` fences every one spells `*` out as the other
 * instances, so they stay fenced; an instance added later (a scale-up) is then not fenced.
 */
export function fenceChange(
  cluster: string,
  current: string | undefined,
  request: FenceRequest,
  instances: readonly string[],
): FenceChange {
  const before = parseFencedInstances(current);
  if (request.instances !== 'all') checkInstances(cluster, request.instances, instances);
  const named = request.instances;
  let after: Fenced;
  let spelledOut = false;
  if (request.action === 'fence') {
    after = named === 'all' || before === everyInstance ? everyInstance : sortedOnce([...before, ...named]);
  } else if (named === 'all') {
    after = [];
  } else {
    spelledOut = before === everyInstance;
    after = sortedOnce(before === everyInstance ? instances : before).filter((n) => !named.includes(n));
  }
  const value =
    after === everyInstance
      ? JSON.stringify([everyInstance])
      : after.length > 0
        ? JSON.stringify(after)
        : null;
  return { value, changed: JSON.stringify(before) !== JSON.stringify(after), spelledOut };
}

/** The merge patch that sets the annotation to `value`, or removes it (null). */
export function fencePatch(value: string | null): {
  metadata: { annotations: Record<string, string | null> };
} {
  return { metadata: { annotations: { [fencedInstancesAnnotation]: value } } };
}
