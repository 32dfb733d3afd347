// The instances of a PostgreSQLCluster as the plugin sees them: each is `<cluster>-<ordinal>`, and
// its pod has the same name.
import type { Resource } from './status-view.ts';

/** A PostgreSQLCluster as kubectl returns it: the fields the plugin reads. */
export interface PostgresCluster extends Resource {
  metadata?: {
    name?: string;
    namespace?: string;
    generation?: number;
    resourceVersion?: string;
    annotations?: Record<string, string>;
  };
  spec?: { primary?: string; instances?: number };
}

/** Orders instance names by ordinal (`accounts-2` before `accounts-10`). */
export function byInstanceName(a: string, b: string): number {
  return a.localeCompare(b, 'en', { numeric: true });
}

/**
 * The instances of cluster `name`: `<name>-0` to `<name>-(spec.instances - 1)`, and any other of
 * its instances the status still lists (one a scale-down is removing still runs, so it counts).
 */
export function instancesOf(name: string, cluster: PostgresCluster): string[] {
  const count = cluster.spec?.instances ?? 0;
  const wanted = Array.from({ length: count }, (_, ordinal) => `${name}-${ordinal}`);
  const statuses = cluster.status?.['instanceStatuses'];
  const observed = (Array.isArray(statuses) ? statuses : [])
    .map((s: unknown) => (typeof s === 'object' && s !== null && 'name' in s ? s.name : undefined))
    .filter((n): n is string => typeof n === 'string' && isInstanceName(name, n));
  return [...new Set([...wanted, ...observed])].sort(byInstanceName);
}

/** Whether `instance` has the form of an instance of cluster `name` (`<name>-<ordinal>`). */
function isInstanceName(name: string, instance: string): boolean {
  return instance.startsWith(`${name}-`) && /^(0|[1-9][0-9]*)$/.test(instance.slice(name.length + 1));
}
