// Fails when a generated file in the chart no longer matches its TypeScript source.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { memcachedCrd } from '../api/memcached-crd.ts';
import { crdTemplate } from './crd-template.ts';
import { valuesSchemaJson } from './values-schema.ts';
import { crdTemplatePath, valuesSchemaPath } from './chart-paths.ts';

const fix = 'run `npm run generate -w operators/memcached` and commit the result';

describe('generated chart files', () => {
  it(`the committed CRD template is what src/api generates (else ${fix})`, () => {
    expect(readFileSync(crdTemplatePath, 'utf8'), fix).toBe(crdTemplate(memcachedCrd));
  });

  it(`the committed values.schema.json is what src/chart/values-schema.ts generates (else ${fix})`, () => {
    // Compared as data: the committed file is prettier-formatted.
    expect(JSON.parse(readFileSync(valuesSchemaPath, 'utf8')), fix).toEqual(JSON.parse(valuesSchemaJson()));
  });
});
