// Fails when a generated file in the chart no longer matches its TypeScript source.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { postgresClusterCrd } from '../api/postgres-cluster-crd.ts';
import { crdManifest } from './crd-manifest.ts';
import { crdTemplatePath } from './chart-paths.ts';

const fix = 'run `npm run generate -w operators/postgres` and commit the result';

describe('generated chart files', () => {
  it(`the committed CRD is what src/api generates (else ${fix})`, () => {
    expect(readFileSync(crdTemplatePath, 'utf8'), fix).toBe(crdManifest(postgresClusterCrd));
  });
});
