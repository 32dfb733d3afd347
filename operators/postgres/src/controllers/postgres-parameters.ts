// spec.postgresql.parameters as the entrypoint's PG_PARAMETERS: one `name = 'value'` line each.
import type { PostgresCluster } from '../api/postgres-cluster-types.ts';

/** A postgresql.conf string literal: single quotes, a quote doubled. */
export function confLiteral(value: string): string {
  return `'${value.replaceAll("'", "''")}'`;
}

/**
 * The lines, sorted by name so the pod spec (and its hash) does not change with the order the
 * user wrote them in. The API server has refused operator-owned names, odd names and multi-line
 * values already; the name check here keeps a value from ever becoming a second line.
 */
export function renderParameters(cluster: PostgresCluster): string {
  const parameters = cluster.spec.postgresql.parameters ?? {};
  return Object.keys(parameters)
    .sort()
    .map((name) => {
      const value = parameters[name] ?? '';
      if (!/^[a-z][a-z0-9_]*([.][a-z][a-z0-9_]*)?$/.test(name) || /[\r\n]/.test(value)) {
        throw new Error(`postgresql.parameters: '${name}' cannot be written to postgresql.conf`);
      }
      return `${name} = ${confLiteral(value)}`;
    })
    .join('\n');
}
