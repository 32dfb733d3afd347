// Where the chart and its generated files live in the repository.
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root, found from this file's place in it. */
export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../../..');
export const chartDir = join(repoRoot, 'charts', 'postgres-operator');
export const crdTemplatePath = join(
  chartDir,
  'templates',
  'crds',
  'postgresqlclusters.postgres.homeostat.dev.yaml',
);
