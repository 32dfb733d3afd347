// The files of an operator chart that are generated from TypeScript, formatted as committed.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { format, resolveConfig } from 'prettier';
import { apiReference, apiReferencePath } from './api-reference.ts';
import { crdTemplate } from './crd-template.ts';
import { olmFiles } from '../olm/bundle-files.ts';
import { buildChartDependencies } from '../testing/helm-chart.ts';
import { grafanaDashboardJson } from './grafana-dashboard.ts';
import { chartPaths, repoRoot, type OperatorChart } from './operator-chart.ts';
import { valuesSchema, valuesSchemaJson } from './values-schema.ts';
import { valuesYaml } from './values-yaml.ts';

export interface GeneratedFile {
  /** Absolute path. */
  path: string;
  text: string;
}

// Formatted like the rest of the repository, so `prettier --check` passes on the committed file.
async function formatted(path: string, text: string, parser: 'json' | 'yaml' | 'markdown'): Promise<string> {
  return format(text, { ...(await resolveConfig(path)), parser });
}

/**
 * Every generated file of `chart`: a CRD template and an API reference page (docs/reference) per
 * CRD, values.schema.json, values.yaml, the Grafana dashboard (when the chart has one) and the
 * OLM bundle and catalog package (when it has an OLM listing; rendering the chart needs helm).
 * `npm run generate` writes them; a test compares the committed ones with them.
 */
export async function chartFiles(chart: OperatorChart): Promise<GeneratedFile[]> {
  const paths = chartPaths(chart);
  const header = [
    `Values of the ${chart.name} chart: every key, its default and what it does. values.schema.json`,
    'checks them and refuses unknown keys. Both are generated from libs/operator-kit/src/chart/values-schema.ts',
    `and ${chart.workspace}/src/chart by \`npm run generate -w ${chart.workspace}\`: edit those, not this file.`,
  ].join('\n');
  return [
    ...chart.crds.map((crd) => ({ path: paths.crdTemplate(crd), text: crdTemplate(chart, crd) })),
    ...(await Promise.all(
      chart.crds.map(async (crd) => {
        const path = join(repoRoot, apiReferencePath(crd));
        return { path, text: await formatted(path, apiReference(chart, crd), 'markdown') };
      }),
    )),
    {
      path: paths.valuesSchema,
      text: await formatted(paths.valuesSchema, valuesSchemaJson(chart), 'json'),
    },
    {
      path: paths.valuesYaml,
      text: await formatted(paths.valuesYaml, valuesYaml(valuesSchema(chart), header), 'yaml'),
    },
    ...(chart.dashboard
      ? [
          {
            path: paths.dashboard,
            text: await formatted(paths.dashboard, grafanaDashboardJson(chart.dashboard), 'json'),
          },
        ]
      : []),
    ...(chart.olm ? await olmFiles(chart, chart.olm) : []),
  ];
}

/** Writes the generated files of `chart` (an operator's `npm run generate`). */
export async function writeChartFiles(chart: OperatorChart): Promise<void> {
  // The OLM bundle is read from the chart's rendering, which needs its library chart vendored.
  if (chart.olm) buildChartDependencies(chart);
  for (const file of await chartFiles(chart)) {
    mkdirSync(dirname(file.path), { recursive: true });
    writeFileSync(file.path, file.text);
    console.warn(`wrote ${relative(repoRoot, file.path)}`);
  }
}
