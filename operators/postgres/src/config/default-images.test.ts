// The default PostgreSQL images are written in several places; they must agree.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { chartPaths, repoRoot } from '@homeostat/operator-kit/chart';
import { supportedMajorVersions } from '../api/postgres-versions.ts';
import { postgresChart } from '../chart/postgres-chart.ts';
import { defaultPostgresImages } from './default-images.ts';

describe('default PostgreSQL images', () => {
  it("are the chart's values and its Artifact Hub images", () => {
    const values = parse(readFileSync(chartPaths(postgresChart).valuesYaml, 'utf8')) as Record<
      string,
      unknown
    >;
    const chartYaml = readFileSync(chartPaths(postgresChart).chartYaml, 'utf8');
    for (const version of supportedMajorVersions) {
      expect(values[`postgres${version}Image`]).toBe(defaultPostgresImages[version]);
      expect(chartYaml).toContain(`image: ${defaultPostgresImages[version]}`);
    }
  });

  it('are the images the local cluster builds (e2e/images/images.json), one per supported version', () => {
    const catalogue = join(repoRoot, 'e2e', 'images', 'images.json');
    // The catalogue belongs to the e2e suites; a checkout without them has nothing to compare.
    if (!existsSync(catalogue)) return;
    const images = JSON.parse(readFileSync(catalogue, 'utf8')) as { operands: Record<string, string> };
    for (const version of supportedMajorVersions) {
      expect(images.operands[`postgres${version}`]).toBe(defaultPostgresImages[version]);
    }
  });
});
