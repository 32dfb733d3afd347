// The ClusterServiceVersion of an operator's registry+v1 bundle: its listing (OlmListing), its
// install as its chart renders it (chart-install.ts), its CRDs' descriptors, and its samples as
// alm-examples.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { crdKind, repoRoot, type OperatorChart } from '../chart/operator-chart.ts';
import { chartInstall, type ChartInstall, type OperatorDeployment } from './chart-install.ts';
import { agreedCapability, chartMetadata, type ChartMetadata } from './chart-metadata.ts';
import { fieldDescription, storageVersion } from './crd-fields.ts';
import { homeostatIcon } from './homeostat-icon.ts';
import { olmLabels } from './olm-labels.ts';
import type { FieldDescriptor, OlmListing } from './olm-listing.ts';

/** The CSV's name, which is also the bundle's and the catalog entry's: "<package>.v<version>". */
export function csvName(chart: OperatorChart, version: string): string {
  return `${chart.name}.v${version}`;
}

// The operator reads the namespaces to watch from WATCH_NAMESPACES (empty: all). Under OLM the
// OperatorGroup decides them and writes them, comma-separated and empty for all namespaces, into
// this annotation of the operator's pods: the same format, so the operator needs no change.
const targetNamespacesField = "metadata.annotations['olm.targetNamespaces']";

function olmDeployment(deployment: OperatorDeployment): {
  name: string;
  label: Record<string, string>;
  spec: unknown;
} {
  const { template } = deployment.spec;
  const containers = template.spec.containers.map((container) => ({
    ...container,
    env: container.env.map((variable) =>
      variable.name === 'WATCH_NAMESPACES'
        ? { name: variable.name, valueFrom: { fieldRef: { fieldPath: targetNamespacesField } } }
        : variable,
    ),
  }));
  return {
    name: deployment.metadata.name,
    label: olmLabels(deployment.metadata.labels ?? {}),
    spec: {
      ...deployment.spec,
      template: {
        ...template,
        metadata: { ...template.metadata, labels: olmLabels(template.metadata.labels) },
        spec: { ...template.spec, containers },
      },
    },
  };
}

function descriptors(
  chart: OperatorChart,
  kind: string,
  section: 'spec' | 'status',
  fields: readonly FieldDescriptor[],
) {
  const crd = chart.crds.find((c) => crdKind(c) === kind);
  if (!crd) throw new Error(`${chart.name} has no CRD of kind ${kind}`);
  return fields.map((field) => ({
    path: field.path,
    displayName: field.displayName,
    description: fieldDescription(crd, section, field.path),
    'x-descriptors': [...field.xDescriptors],
  }));
}

function ownedCrds(chart: OperatorChart, listing: OlmListing) {
  return chart.crds.map((crd) => {
    const kind = crdKind(crd);
    const owned = listing.ownedKinds.find((k) => k.kind === kind);
    if (!owned) throw new Error(`${chart.name}'s OLM listing does not describe its kind ${kind}`);
    return {
      name: crd.metadata.name,
      version: storageVersion(crd),
      kind,
      displayName: owned.displayName,
      description: owned.description,
      specDescriptors: descriptors(chart, kind, 'spec', owned.specDescriptors),
      statusDescriptors: descriptors(chart, kind, 'status', owned.statusDescriptors),
    };
  });
}

/** The samples as OLM's alm-examples annotation: a JSON array of the objects, comments dropped. */
export function almExamples(chart: OperatorChart, listing: OlmListing): string {
  const objects = listing.samples.flatMap((sample) =>
    parseAllDocuments(readFileSync(join(repoRoot, chart.workspace, sample), 'utf8')).map((d): unknown =>
      d.toJS(),
    ),
  );
  return JSON.stringify(objects);
}

/** Every image the operator runs, its own first: what a mirror for a disconnected cluster needs. */
export function relatedImages(install: ChartInstall, listing: OlmListing): { name: string; image: string }[] {
  return [{ name: 'operator', image: install.operatorImage }, ...listing.operandImages];
}

/** The ClusterServiceVersion of `chart` at its Chart.yaml appVersion. */
export function clusterServiceVersion(
  chart: OperatorChart,
  listing: OlmListing,
  install: ChartInstall = chartInstall(chart),
  metadata: ChartMetadata = chartMetadata(chart),
) {
  const version = metadata.appVersion;
  return {
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'ClusterServiceVersion',
    metadata: {
      name: csvName(chart, version),
      annotations: {
        'alm-examples': almExamples(chart, listing),
        capabilities: agreedCapability(metadata, listing),
        categories: listing.categories.join(','),
        containerImage: install.operatorImage,
        description: listing.summary,
        repository: metadata.home,
        support: 'Homeostat',
        // Where the guides install the operators with Helm, so both installs look alike.
        'operators.operatorframework.io/suggested-namespace': 'homeostat-system',
      },
    },
    spec: {
      displayName: listing.displayName,
      description: listing.description,
      version,
      minKubeVersion: metadata.minKubeVersion,
      maturity: 'alpha',
      provider: { name: 'Homeostat', url: metadata.home },
      links: [
        { name: 'Source', url: metadata.sources[0] ?? metadata.home },
        { name: 'Project', url: metadata.home },
      ],
      keywords: [...listing.keywords],
      icon: [homeostatIcon],
      // The chart installs cluster-wide (a ClusterRole) or for listed namespaces (a Role in each),
      // so every mode OLM has is one the operator was tested in.
      installModes: [
        { type: 'OwnNamespace', supported: true },
        { type: 'SingleNamespace', supported: true },
        { type: 'MultiNamespace', supported: true },
        { type: 'AllNamespaces', supported: true },
      ],
      install: {
        strategy: 'deployment',
        spec: {
          deployments: [olmDeployment(install.deployment)],
          // Namespaced permissions: OLM grants them in every namespace the OperatorGroup targets
          // (cluster-wide for AllNamespaces) and in the operator's own, where its Lease is.
          permissions: [{ serviceAccountName: install.serviceAccountName, rules: install.rules }],
        },
      },
      customresourcedefinitions: { owned: ownedCrds(chart, listing) },
      relatedImages: relatedImages(install, listing),
    },
  };
}
