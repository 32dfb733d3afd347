// Fails when a generated file in an operator's chart no longer matches its TypeScript source.
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { chartFiles } from '../chart/chart-files.ts';
import { repoRoot, type OperatorChart } from '../chart/operator-chart.ts';

/** Registers a test per generated file of `chart` (CRD templates, values.schema.json, values.yaml). */
export function describeGeneratedChartFiles(chart: OperatorChart): void {
  const fix = `run \`npm run generate -w ${chart.workspace}\` and commit the result`;
  describe(`generated files of the ${chart.name} chart`, async () => {
    for (const file of await chartFiles(chart)) {
      it(`${relative(repoRoot, file.path)} is what its source generates (else ${fix})`, () => {
        expect(readFileSync(file.path, 'utf8'), fix).toBe(file.text);
      });
    }
  });
}
