// The checks every operator chart's Grafana dashboard passes: the committed JSON parses, its panel
// ids and titles are unique, every panel reads the chosen data source, every variable a query uses
// is defined, every query (panels and variables) reads only metrics the operator, built as it
// runs, registers, or its operand's exporter serves (or `up`), and a misspelled one is caught; the `job` variable names a controller
// the operator has; and the real helm renders no ConfigMap by default and, when asked, one that
// carries the JSON, the sidecar's label and the user's annotations, in the namespace asked for.
// (kubeconform checks that ConfigMap in the chart-conventions suite's value sets.)
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Manager } from '@homeostat/reconcile';
import { chartPaths, type OperatorChart } from '../chart/operator-chart.ts';
import { exportedMetricNames } from './exported-metric-names.ts';
import {
  dashboardMetricNames,
  dashboardPanels,
  dashboardQueries,
  variablesIn,
  type DashboardJson,
  type DashboardQuery,
} from './grafana-dashboard-queries.ts';
import { helmTemplate, renderedObjects, type RenderedObject } from './helm-chart.ts';

export interface GrafanaDashboardOptions {
  /** The operator built as it runs (not started): its registry and its controllers. */
  operator: () => Pick<Manager, 'metrics' | 'controllerNamed'>;
  /**
   * The names the operand's own exporter serves (from a real scrape), for dashboards with panels
   * on its series; without it, panels may read only the operator's metrics.
   */
  operandMetrics?: () => Promise<ReadonlySet<string>>;
}

const release = 'dash';
const namespace = 'ops';
/** Series Prometheus itself makes for every target. */
const scrapeSeries = new Set(['up']);

type ConfigMap = RenderedObject & {
  metadata: {
    name: string;
    namespace: string;
    labels: Record<string, string>;
    annotations?: Record<string, string>;
  };
  data: Record<string, string>;
};

/** Registers the Grafana dashboard tests of `chart`; needs its dependencies built (chartDependenciesGlobalSetup). */
export function describeGrafanaDashboard(chart: OperatorChart, options: GrafanaDashboardOptions): void {
  const path = chartPaths(chart).dashboard;
  const text = () => readFileSync(path, 'utf8');
  const dashboard = () => JSON.parse(text()) as DashboardJson;
  const configMaps = (...args: string[]) =>
    renderedObjects(helmTemplate(chart, release, namespace, args).stdout).filter(
      (d): d is ConfigMap => d.kind === 'ConfigMap',
    );

  describe(`${chart.name} chart: the Grafana dashboard, its queries against the operator's registry, with the real helm`, () => {
    it('parses, with unique panel ids and titles, every panel on the data source variable', () => {
      const json = dashboard();
      expect(json.uid?.length ?? 0).toBeGreaterThan(0);
      expect(json.uid?.length ?? 0).toBeLessThanOrEqual(40);
      const panels = dashboardPanels(json);
      const ids = panels.map((p) => p.id);
      const titles = panels.map((p) => p.title);
      expect(ids.every((id) => typeof id === 'number')).toBe(true);
      expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toEqual([]);
      expect(titles.filter((t, i) => titles.indexOf(t) !== i)).toEqual([]);
      for (const panel of panels.filter((p) => p.type !== 'row')) {
        expect(panel.targets?.length ?? 0, panel.title).toBeGreaterThan(0);
        expect(panel.datasource?.uid, panel.title).toBe('${datasource}');
        for (const target of panel.targets ?? [])
          expect(target.datasource?.uid, panel.title).toBe('${datasource}');
      }
    });

    it('uses only variables it defines, and lists the operator by a controller it has', () => {
      const json = dashboard();
      const defined = (json.templating?.list ?? []).map((v) => v.name);
      expect(defined).toEqual(expect.arrayContaining(['datasource', 'job']));
      const used = dashboardQueries(json).flatMap((q) => variablesIn(q.expr).map((v) => `${q.where}: $${v}`));
      expect(used.filter((u) => !defined.includes(u.slice(u.lastIndexOf('$') + 1)))).toEqual([]);
      const job = dashboardQueries(json).find((q) => q.where === 'variable job');
      const controller = /controller="([^"]+)"/.exec(job?.expr ?? '')?.[1] ?? '';
      expect(options.operator().controllerNamed(controller), `controller ${controller}`).toBeDefined();
    });

    it(`queries only metrics the operator${options.operandMetrics ? ' or its operand' : ''} exports (and catches one neither does)`, async () => {
      const exported = new Set([
        ...(await exportedMetricNames(options.operator().metrics.registry)),
        ...((await options.operandMetrics?.()) ?? []),
      ]);
      const unexported = (queries: DashboardQuery[]) =>
        queries.flatMap((q) =>
          dashboardMetricNames(q.expr)
            .filter((name) => !exported.has(name) && !scrapeSeries.has(name))
            .map((name) => `${q.where}: ${name}`),
        );
      const queries = dashboardQueries(dashboard());
      expect(queries.length).toBeGreaterThan(0);
      expect(unexported(queries)).toEqual([]);
      // The last panel query with a metric selector, its metric misspelled.
      const misspelled = structuredClone(queries);
      const victim = misspelled.filter((q) => q.where.startsWith('panel') && /[a-z_]+\{/.test(q.expr)).at(-1);
      if (victim) victim.expr = victim.expr.replace(/([a-z_]+)\{/, '$1_typo{');
      expect(unexported(misspelled)).toHaveLength(1);
    });

    it('renders no ConfigMap unless asked for, and one with the JSON and the sidecar label when asked', () => {
      expect(configMaps()).toEqual([]);
      const [shipped, ...more] = configMaps('--set', 'grafana.dashboard.enabled=true');
      expect(more).toEqual([]);
      expect(shipped?.metadata.namespace).toBe(namespace);
      expect(shipped?.metadata.labels['grafana_dashboard']).toBe('1');
      expect(shipped?.metadata.labels['app.kubernetes.io/name']).toBe(chart.name);
      expect(Object.keys(shipped?.data ?? {})).toEqual([`${chart.name}.json`]);
      expect(shipped?.data[`${chart.name}.json`]).toBe(text());
    });

    it('takes the labels, annotations and namespace the sidecar is set up for', () => {
      const [shipped] = configMaps(
        '--set',
        'grafana.dashboard.enabled=true',
        '--set',
        'grafana.dashboard.labels.grafana_dashboard=null',
        '--set',
        'grafana.dashboard.labels.dashboards=homeostat',
        '--set',
        'grafana.dashboard.annotations.grafana_folder=Databases',
        '--set',
        'grafana.dashboard.namespace=monitoring',
      );
      expect(shipped?.metadata.namespace).toBe('monitoring');
      expect(shipped?.metadata.labels['dashboards']).toBe('homeostat');
      expect(shipped?.metadata.labels).not.toHaveProperty('grafana_dashboard');
      expect(shipped?.metadata.annotations).toEqual({ grafana_folder: 'Databases' });
    });
  });
}
