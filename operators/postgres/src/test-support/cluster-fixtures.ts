// PostgreSQLClusters for tests: as the API server stores them (the schema's defaults applied).
import { FormatRegistry } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { PostgresClusterSpec } from '../api/postgres-cluster-schema.ts';
import type { PostgresCluster, PostgresClusterSpecFields } from '../api/postgres-cluster-types.ts';

// The API server checks `format: date-time` (bootstrap.recovery.target.time); TypeBox knows no
// format until one is registered.
if (!FormatRegistry.Has('date-time')) {
  FormatRegistry.Set(
    'date-time',
    (value) => /^\d{4}-\d\d-\d\dT/.test(value) && !Number.isNaN(Date.parse(value)),
  );
}

/** A spec as a user writes it: any subset of the fields, nested objects partial too. */
export type PartialSpec = { [K in keyof PostgresClusterSpecFields]?: unknown };

/** `spec` with every default the API server would fill in. */
export function withDefaults(spec: PartialSpec = {}): PostgresClusterSpecFields {
  const filled: unknown = Value.Default(PostgresClusterSpec, structuredClone(spec));
  if (!Value.Check(PostgresClusterSpec, filled)) {
    throw new Error(
      `not a valid spec: ${[...Value.Errors(PostgresClusterSpec, filled)].map((e) => `${e.path} ${e.message}`).join('; ')}`,
    );
  }
  return filled;
}

/** A cluster read back from the API server (uid and generation set), with `spec` defaulted. */
export function storedCluster(name: string, namespace: string, spec: PartialSpec = {}): PostgresCluster {
  return {
    apiVersion: 'postgres.homeostat.dev/v1alpha1',
    kind: 'PostgreSQLCluster',
    metadata: { name, namespace, uid: `uid-${name}`, generation: 1 },
    spec: withDefaults(spec),
  };
}
