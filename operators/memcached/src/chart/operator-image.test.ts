// The operator image is named in three places; they must agree, or `helm install` with default
// values asks for an image that `npm run images` (and e2e/kind/up.sh) never built.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { chartDir, repoRoot } from './chart-paths.ts';

const chart = parse(readFileSync(join(chartDir, 'Chart.yaml'), 'utf8')) as { appVersion: string };
const values = parse(readFileSync(join(chartDir, 'values.yaml'), 'utf8')) as {
  image: { repository: string; tag: string };
};
const defaultImage = `${values.image.repository}:${values.image.tag || chart.appVersion}`;

describe('default operator image', () => {
  it('is the Artifact Hub image of the chart', () => {
    expect(readFileSync(join(chartDir, 'Chart.yaml'), 'utf8')).toContain(`image: ${defaultImage}`);
  });

  it('is the image the offline build tags (e2e/images/images.json operators.memcached)', () => {
    const catalogue = join(repoRoot, 'e2e', 'images', 'images.json');
    if (!existsSync(catalogue)) return;
    const images = JSON.parse(readFileSync(catalogue, 'utf8')) as { operators: { memcached: string } };
    expect(images.operators.memcached).toBe(defaultImage);
  });

  it('is the tag the Dockerfile documents', () => {
    expect(readFileSync(join(repoRoot, 'operators', 'memcached', 'Dockerfile'), 'utf8')).toContain(
      `-t ${defaultImage} .`,
    );
  });
});
