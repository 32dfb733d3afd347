// What a Grafana dashboard asks Prometheus: every panel's queries and every query variable's, with
// Grafana's own variables taken out, so a test can check the metric names they read.
import { metricNamesIn } from './promql-metric-names.ts';

/** A Grafana panel as the dashboard JSON holds it (rows nest theirs). */
export interface DashboardPanel {
  id?: number;
  type?: string;
  title?: string;
  datasource?: { uid?: string };
  targets?: { expr?: string; datasource?: { uid?: string } }[];
  panels?: DashboardPanel[];
}

/** A Grafana dashboard as its JSON holds it, read loosely: the fields tests check. */
export interface DashboardJson {
  uid?: string;
  title?: string;
  panels?: DashboardPanel[];
  templating?: { list?: { name?: string; type?: string; query?: string | { query?: string } }[] };
}

/** One query of a dashboard: where it is (a panel's title or a variable) and its PromQL. */
export interface DashboardQuery {
  where: string;
  expr: string;
}

/** Every panel of `dashboard`, rows' nested panels included. */
export function dashboardPanels(dashboard: DashboardJson): DashboardPanel[] {
  return (dashboard.panels ?? []).flatMap((p) => [p, ...dashboardPanels({ panels: p.panels ?? [] })]);
}

/** Every PromQL query of `dashboard`: panel targets, and the selector inside each label_values(...) variable. */
export function dashboardQueries(dashboard: DashboardJson): DashboardQuery[] {
  const panels = dashboardPanels(dashboard).flatMap((p) =>
    (p.targets ?? []).map((t) => ({ where: `panel ${p.title ?? p.id}`, expr: t.expr ?? '' })),
  );
  const variables = (dashboard.templating?.list ?? [])
    .filter((v) => v.type === 'query')
    .map((v) => {
      const query = typeof v.query === 'string' ? v.query : (v.query?.query ?? '');
      const selector = /^label_values\((.+),\s*[a-zA-Z_]\w*\)$/.exec(query.trim())?.[1];
      // label_values(label) alone reads every metric: the dashboard should never ask that.
      if (!selector) throw new Error(`variable ${v.name}: ${query} is not label_values(<selector>, <label>)`);
      return { where: `variable ${v.name}`, expr: selector };
    });
  return [...panels, ...variables];
}

/** The Grafana variables (`$job`, `${datasource}`) `expr` uses, Grafana's built-in `$__…` left out. */
export function variablesIn(expr: string): string[] {
  const names = [...expr.matchAll(/\$\{?(\w+)/g)].map((m) => m[1] ?? '').filter((n) => !n.startsWith('__'));
  return [...new Set(names)];
}

/** The metric names a dashboard query reads, its Grafana variables stood in for by a number. */
export function dashboardMetricNames(expr: string): string[] {
  return metricNamesIn(expr.replace(/\$\{\w+\}|\$\w+/g, '1'));
}
