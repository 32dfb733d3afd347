// What the kit needs to know about an operator to generate and test its chart.
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TProperties } from '@sinclair/typebox';
import type { CustomResourceDefinition } from '@homeostat/reconcile';
import type { OlmListing } from '../olm/olm-listing.ts';
import type { OperatorDashboard } from './grafana-dashboard.ts';

/** The repository root, found from this file's place in it. */
export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../../..');

/** An operator's chart, as the kit generates and tests it. */
export interface OperatorChart {
  /** The chart's name and its folder under charts/, e.g. "memcached-operator". */
  name: string;
  /** The operator's workspace, from the repository root, e.g. "operators/memcached". */
  workspace: string;
  /** The CRDs the chart installs and keeps, each generated into templates/crds/<crd name>.yaml. */
  crds: readonly CustomResourceDefinition[];
  /**
   * The operator's own chart values, as TypeBox schemas with a `default` and a `description`
   * each (closed objects may nest them). They come after `imagePullSecrets` in values.yaml.
   */
  values: TProperties;
  /** The operator's Grafana dashboard, generated into dashboards/<chart>.json (grafana.dashboard.* ships it). */
  dashboard?: OperatorDashboard;
  /** The operator's OLM listing; with it, its bundle and catalog package are generated under olm/. */
  olm?: OlmListing;
}

/** Where an operator chart's files live. */
export function chartPaths(chart: OperatorChart) {
  const dir = join(repoRoot, 'charts', chart.name);
  return {
    dir,
    chartYaml: join(dir, 'Chart.yaml'),
    valuesYaml: join(dir, 'values.yaml'),
    valuesSchema: join(dir, 'values.schema.json'),
    /** The Grafana dashboard the library chart's ConfigMap template reads (dashboards/<chart>.json). */
    dashboard: join(dir, 'dashboards', `${chart.name}.json`),
    crdTemplate: (crd: CustomResourceDefinition) =>
      join(dir, 'templates', 'crds', `${crd.metadata.name}.yaml`),
    /** The Dockerfile every operator image is built from (`--build-arg OPERATOR=<workspace folder>`). */
    dockerfile: join(repoRoot, 'operators', 'Dockerfile'),
  };
}

/** The kind a CRD defines, e.g. "Memcached". */
export function crdKind(crd: CustomResourceDefinition): string {
  const names = crd.spec['names'] as { kind?: unknown } | undefined;
  if (typeof names?.kind !== 'string') throw new Error(`CRD ${crd.metadata.name} has no spec.names.kind`);
  return names.kind;
}

/** The kinds of the chart's CRDs in prose: "Memcached", or "EtcdCluster and EtcdBackup". */
export function kindsInProse(chart: OperatorChart, suffix = ''): string {
  const kinds = chart.crds.map((crd) => `${crdKind(crd)}${suffix}`);
  return kinds.length > 1 ? `${kinds.slice(0, -1).join(', ')} and ${kinds.at(-1)}` : (kinds[0] ?? '');
}
