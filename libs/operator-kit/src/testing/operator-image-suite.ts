// An operator's image is named in several places; they must agree, or `helm install` with default
// values asks for an image that `npm run images` (and e2e/kind/up.sh) never built.
import { existsSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { operatorNodeFlags } from '../bundle/bundle-operator.ts';
import { chartPaths, repoRoot, type OperatorChart } from '../chart/operator-chart.ts';

/** The image the chart runs with default values: image.repository and the chart's appVersion. */
export function defaultOperatorImage(chart: OperatorChart): string {
  const paths = chartPaths(chart);
  const { appVersion } = parse(readFileSync(paths.chartYaml, 'utf8')) as { appVersion: string };
  const { image } = parse(readFileSync(paths.valuesYaml, 'utf8')) as {
    image: { repository: string; tag: string };
  };
  return `${image.repository}:${image.tag || appVersion}`;
}

/** Registers the tests that the chart's default image is the one the repository builds and documents. */
export function describeOperatorImage(chart: OperatorChart): void {
  const operator = basename(chart.workspace);
  const image = defaultOperatorImage(chart);

  describe(`default ${chart.name} image`, () => {
    it('is the Artifact Hub image of the chart', () => {
      expect(readFileSync(chartPaths(chart).chartYaml, 'utf8')).toContain(`image: ${image}`);
    });

    it(`is the image the offline build tags (e2e/images/images.json operators.${operator})`, () => {
      const catalogue = join(repoRoot, 'e2e', 'images', 'images.json');
      // The catalogue belongs to the e2e suites; a checkout without them has nothing to compare.
      if (!existsSync(catalogue)) return;
      const images = JSON.parse(readFileSync(catalogue, 'utf8')) as { operators: Record<string, string> };
      expect(images.operators[operator]).toBe(image);
    });

    it('runs its bundle with the Node flags the benchmark measured (operatorNodeFlags)', () => {
      const entrypoint = /^ENTRYPOINT (\[.*\])$/m.exec(
        readFileSync(chartPaths(chart).dockerfile, 'utf8'),
      )?.[1];
      expect(JSON.parse(entrypoint ?? '[]')).toEqual(['node', ...operatorNodeFlags, '/app/operator.mjs']);
    });

    it(`is the tag the operator's README gives to docker build`, () => {
      expect(readFileSync(join(repoRoot, chart.workspace, 'README.md'), 'utf8')).toContain(
        `docker build -f operators/Dockerfile --build-arg OPERATOR=${operator} -t ${image} .`,
      );
    });
  });
}
