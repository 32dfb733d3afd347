// Writes the chart's generated files from their TypeScript sources:
//   templates/crds/memcacheds.cache.homeostat.dev.yaml  (from src/api, the TypeBox schema)
//   values.schema.json                                   (from src/chart/values-schema.ts)
// Run after changing either: npm run generate -w operators/memcached
import { mkdirSync, writeFileSync } from 'node:fs';
import { format, resolveConfig } from 'prettier';
import { dirname, relative } from 'node:path';
import { memcachedCrd } from '../src/api/memcached-crd.ts';
import { crdTemplate } from '../src/chart/crd-template.ts';
import { valuesSchemaJson } from '../src/chart/values-schema.ts';
import { crdTemplatePath, repoRoot, valuesSchemaPath } from '../src/chart/chart-paths.ts';

for (const [path, text] of [
  [crdTemplatePath, crdTemplate(memcachedCrd)],
  // Formatted like the rest of the repository, so `prettier --check` passes on it.
  [
    valuesSchemaPath,
    await format(valuesSchemaJson(), { ...(await resolveConfig(valuesSchemaPath)), parser: 'json' }),
  ],
] as const) {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
  console.warn(`wrote ${relative(repoRoot, path)}`);
}
