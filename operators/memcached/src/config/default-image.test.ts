// The default memcached and exporter images are written in three places each; they must agree.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { chartPaths, repoRoot } from '@homeostat/operator-kit/chart';
import { memcachedChart } from '../chart/memcached-chart.ts';
import { defaultMemcachedExporterImage, defaultMemcachedImage } from './default-image.ts';

describe('default memcached image', () => {
  it("is the chart's memcachedImage value and its Artifact Hub image", () => {
    const values = parse(readFileSync(chartPaths(memcachedChart).valuesYaml, 'utf8')) as {
      memcachedImage: string;
      memcachedExporterImage: string;
    };
    expect(values.memcachedImage).toBe(defaultMemcachedImage);
    expect(values.memcachedExporterImage).toBe(defaultMemcachedExporterImage);
    const chartYaml = readFileSync(chartPaths(memcachedChart).chartYaml, 'utf8');
    expect(chartYaml).toContain(`image: ${defaultMemcachedImage}`);
    expect(chartYaml).toContain(`image: ${defaultMemcachedExporterImage}`);
  });

  it('is the image the local cluster builds (e2e/images/images.json)', () => {
    const catalogue = join(repoRoot, 'e2e', 'images', 'images.json');
    // The catalogue belongs to the e2e suites; a checkout without them has nothing to compare.
    if (!existsSync(catalogue)) return;
    const images = JSON.parse(readFileSync(catalogue, 'utf8')) as {
      operands: { memcached: string; memcachedExporter: string };
    };
    expect(images.operands.memcached).toBe(defaultMemcachedImage);
    expect(images.operands.memcachedExporter).toBe(defaultMemcachedExporterImage);
  });
});
