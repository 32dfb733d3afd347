// The generated files of an operator's OLM release: its registry+v1 bundle under
// olm/bundles/<package>/ and its package of the file-based catalog under olm/catalog/<package>/.
import { join } from 'node:path';
import { format, resolveConfig } from 'prettier';
import { stringify } from 'yaml';
import type { GeneratedFile } from '../chart/chart-files.ts';
import { crdKind, repoRoot, type OperatorChart } from '../chart/operator-chart.ts';
import { chartInstall, type RenderedService } from './chart-install.ts';
import { chartMetadata } from './chart-metadata.ts';
import { clusterServiceVersion, csvName, relatedImages } from './cluster-service-version.ts';
import { crdSpecOf, storageVersion } from './crd-fields.ts';
import { catalogEntries } from './file-based-catalog.ts';
import { olmLabels } from './olm-labels.ts';
import type { OlmListing } from './olm-listing.ts';

/**
 * The channel every bundle is published in: "candidate" in OLM's channel naming, for releases
 * whose APIs (v1alpha1) may still change; "fast" and "stable" wait for a v1 API.
 */
export const olmChannel = 'candidate';

/** Where an operator's OLM files live. */
export function olmPaths(chart: OperatorChart) {
  const bundle = join(repoRoot, 'olm', 'bundles', chart.name);
  return {
    bundle,
    manifests: join(bundle, 'manifests'),
    annotations: join(bundle, 'metadata', 'annotations.yaml'),
    catalog: join(repoRoot, 'olm', 'catalog', chart.name, 'catalog.yaml'),
  };
}

/** The bundle image of a version: the operator image's repository with "-bundle". */
export function bundleImage(operatorImage: string, version: string): string {
  const repository = operatorImage.replace(/[:@][^/]*$/, '');
  return `${repository}-bundle:${version}`;
}

// A rendered Service as a bundle carries it: no namespace (OLM installs it into the operator's).
function bundledService(rendered: RenderedService): RenderedService {
  const { name, labels = {} } = rendered.metadata;
  return { ...rendered, metadata: { name, labels: olmLabels(labels) } };
}

async function yamlFile(path: string, header: string, documents: readonly unknown[]): Promise<GeneratedFile> {
  const body = documents.map((d) => stringify(d, { lineWidth: 0 })).join('---\n');
  const text = `${header
    .split('\n')
    .map((line) => `# ${line}`)
    .join('\n')}\n${body}`;
  return { path, text: await format(text, { ...(await resolveConfig(path)), parser: 'yaml' }) };
}

/**
 * The OLM files of `chart`: the bundle (CSV, CRDs, metrics Service, metadata/annotations.yaml)
 * and the catalog package. Generated with the chart's files; the same stale-file test checks them.
 */
export async function olmFiles(chart: OperatorChart, listing: OlmListing): Promise<GeneratedFile[]> {
  const paths = olmPaths(chart);
  const install = chartInstall(chart);
  const metadata = chartMetadata(chart);
  const version = metadata.appVersion;
  const header = [
    `Generated from ${chart.workspace}/src/chart and charts/${chart.name} by \`npm run generate -w ${chart.workspace}\``,
    '(libs/operator-kit/src/olm): edit those, not this file.',
  ].join('\n');
  const csv = clusterServiceVersion(chart, listing, install, metadata);
  const apis = chart.crds.map((crd) => ({
    group: crdSpecOf(crd).group,
    kind: crdKind(crd),
    version: storageVersion(crd),
  }));
  return Promise.all([
    yamlFile(join(paths.manifests, `${csv.metadata.name}.clusterserviceversion.yaml`), header, [csv]),
    ...chart.crds.map((crd) => yamlFile(join(paths.manifests, `${crd.metadata.name}.yaml`), header, [crd])),
    ...install.services.map((service) =>
      yamlFile(join(paths.manifests, `${service.metadata.name}.service.yaml`), header, [
        bundledService(service),
      ]),
    ),
    yamlFile(paths.annotations, header, [
      {
        annotations: {
          'operators.operatorframework.io.bundle.mediatype.v1': 'registry+v1',
          'operators.operatorframework.io.bundle.manifests.v1': 'manifests/',
          'operators.operatorframework.io.bundle.metadata.v1': 'metadata/',
          'operators.operatorframework.io.bundle.package.v1': chart.name,
          'operators.operatorframework.io.bundle.channels.v1': olmChannel,
          'operators.operatorframework.io.bundle.channel.default.v1': olmChannel,
        },
      },
    ]),
    yamlFile(
      paths.catalog,
      header,
      catalogEntries({
        name: chart.name,
        description: listing.summary,
        channel: olmChannel,
        bundle: {
          name: csvName(chart, version),
          version,
          image: bundleImage(install.operatorImage, version),
          apis,
          relatedImages: relatedImages(install, listing),
        },
      }),
    ),
  ]);
}
