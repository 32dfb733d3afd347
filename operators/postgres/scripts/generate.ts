// Writes the chart's generated files from their TypeScript sources:
//   templates/crds/postgresqlclusters.postgres.homeostat.dev.yaml  (from src/api, the TypeBox schema)
// Run after changing it: npm run generate -w operators/postgres
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, relative } from 'node:path';
import { postgresClusterCrd } from '../src/api/postgres-cluster-crd.ts';
import { crdManifest } from '../src/chart/crd-manifest.ts';
import { crdTemplatePath, repoRoot } from '../src/chart/chart-paths.ts';

for (const [path, text] of [[crdTemplatePath, crdManifest(postgresClusterCrd)]] as const) {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
  console.warn(`wrote ${relative(repoRoot, path)}`);
}
