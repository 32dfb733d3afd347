// The default memcached image is written in three places; they must agree.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { chartPaths, repoRoot } from '@homeostat/operator-kit/chart';
import { memcachedChart } from '../chart/memcached-chart.ts';
import { defaultMemcachedImage } from './default-image.ts';

describe('default memcached image', () => {
  it("is the chart's memcachedImage value and its Artifact Hub image", () => {
    const values = parse(readFileSync(chartPaths(memcachedChart).valuesYaml, 'utf8')) as {
      memcachedImage: string;
    };
    expect(values.memcachedImage).toBe(defaultMemcachedImage);
    expect(readFileSync(chartPaths(memcachedChart).chartYaml, 'utf8')).toContain(
      `image: ${defaultMemcachedImage}`,
    );
  });

  it('is the image the local cluster builds (e2e/images/images.json)', () => {
    const catalogue = join(repoRoot, 'e2e', 'images', 'images.json');
    // The catalogue belongs to the e2e suites; a checkout without them has nothing to compare.
    if (!existsSync(catalogue)) return;
    const images = JSON.parse(readFileSync(catalogue, 'utf8')) as { operands: { memcached: string } };
    expect(images.operands.memcached).toBe(defaultMemcachedImage);
  });
});
