// An operator's Grafana dashboard, written once in TypeScript and generated into its chart
// (charts/<chart>/dashboards/<chart>.json): the panels every operator shares (operator up, leader,
// reconciles, errors, durations, work queues, API requests) come from here, each operator adds its
// own rows. Every query selects the operator's series by the job its ServiceMonitor gives them,
// picked in the `job` variable among the jobs that run the operator's controller, so another
// operator's controller_runtime_* series never mix in.

type Colour = 'green' | 'orange' | 'red';

/** How a panel shows its queries. */
export type PanelKind = 'timeseries' | 'stat';

/** One query of a panel: PromQL (Grafana variables allowed) and its legend. */
export interface PanelQuery {
  expr: string;
  legend: string;
}

/** One panel as an operator describes it; layout, ids and the data source are filled in. */
export interface PanelSpec {
  title: string;
  /** What the on-call engineer reads off it, shown as the panel's tooltip. */
  description: string;
  kind: PanelKind;
  queries: readonly PanelQuery[];
  /** A Grafana unit: s, bytes, ops, short, ... */
  unit?: string;
  /** Value texts, e.g. { 0: 'OK', 1: 'failing' }. */
  mappings?: Readonly<Record<number, string>>;
  /** Colours by value: `base` (default green) below the first step, from each step's value its colour. */
  thresholds?: { base?: Colour; steps: readonly { value: number; color: Colour }[] };
  /** Width in Grafana's 24 columns (default 8). */
  width?: number;
}

export interface DashboardRow {
  title: string;
  panels: readonly PanelSpec[];
}

/** An operator's dashboard: its name, how to find its job, and its own rows. */
export interface OperatorDashboard {
  /** The dashboard's title, e.g. "Homeostat / PostgreSQL operator". */
  title: string;
  /** Grafana uid, stable across releases so links keep working (at most 40 characters). */
  uid: string;
  /** A controller of this operator (its `controller` label): the `job` variable lists the jobs that run it. */
  controller: string;
  /**
   * A per-cluster metric with `namespace` and `cluster` labels: the `namespace` and `cluster`
   * variables list its values. Absent when the operator exports no per-resource series.
   */
  clusterMetric?: string;
  /**
   * The label of `clusterMetric` that names one resource (default `cluster`): the `cluster` variable
   * lists its values, shown as this label capitalised (e.g. `cache` → "Cache").
   */
  clusterLabel?: string;
  /** The operator's own rows, above the shared operator row. */
  rows: readonly DashboardRow[];
}

/** The selector of the operator's own series, for queries in an operator's panels. */
export const operatorSelector = '{job="$job"}';
/** The selector of the per-cluster series the namespace and cluster variables pick. */
export const clusterSelector = '{job="$job", namespace=~"$namespace", cluster=~"$cluster"}';

const datasource = { type: 'prometheus', uid: '${datasource}' };
const rate = (metric: string) => `rate(${metric}${operatorSelector}[$__rate_interval])`;
const quantile = (q: number, metric: string, by: string) =>
  `histogram_quantile(${q}, sum by (${by}, le) (${rate(metric)}))`;

/** The panels every operator's dashboard ends with. */
export const operatorRow: DashboardRow = {
  title: 'Operator',
  panels: [
    {
      title: 'Operator pods up',
      description: 'Operator pods that answered their last scrape. 0 means nothing reconciles.',
      kind: 'stat',
      queries: [{ expr: `sum(up${operatorSelector})`, legend: 'up' }],
      thresholds: { base: 'red', steps: [{ value: 1, color: 'green' }] },
      width: 4,
    },
    {
      title: 'Leading replicas',
      description:
        'Operator replicas holding the leader-election Lease: 1 when healthy; 0 for longer than a Lease takeover (about 15 s) means no replica reconciles.',
      kind: 'stat',
      queries: [{ expr: `sum(leader_election_master_status${operatorSelector})`, legend: 'leaders' }],
      thresholds: {
        base: 'red',
        steps: [
          { value: 1, color: 'green' },
          { value: 2, color: 'red' },
        ],
      },
      width: 4,
    },
    {
      title: 'Reconciles by result',
      description:
        'Reconciles per second per controller and result (success, error, requeue, requeue_after).',
      kind: 'timeseries',
      queries: [
        {
          expr: `sum by (controller, result) (${rate('controller_runtime_reconcile_total')})`,
          legend: '{{controller}} {{result}}',
        },
      ],
      unit: 'ops',
    },
    {
      title: 'Reconcile errors',
      description:
        'Failed reconciles per second per controller. A controller that keeps failing does not converge its resources: the logs and the resources’ conditions and Events say why.',
      kind: 'timeseries',
      queries: [
        {
          expr: `sum by (controller) (${rate('controller_runtime_reconcile_errors_total')})`,
          legend: '{{controller}}',
        },
      ],
      unit: 'ops',
    },
    {
      title: 'Reconcile duration',
      description: 'Median and 99th percentile time of one reconcile per controller.',
      kind: 'timeseries',
      queries: [
        {
          expr: quantile(0.5, 'controller_runtime_reconcile_time_seconds_bucket', 'controller'),
          legend: '{{controller}} p50',
        },
        {
          expr: quantile(0.99, 'controller_runtime_reconcile_time_seconds_bucket', 'controller'),
          legend: '{{controller}} p99',
        },
      ],
      unit: 's',
    },
    {
      title: 'Work queue depth',
      description:
        'Resources waiting for a worker per queue. Staying high means the workers cannot keep up: changes reach resources late.',
      kind: 'timeseries',
      queries: [{ expr: `sum by (name) (workqueue_depth${operatorSelector})`, legend: '{{name}}' }],
      unit: 'short',
    },
    {
      title: 'Time waiting in the work queue',
      description: '99th percentile time a resource waits in its queue before a worker takes it.',
      kind: 'timeseries',
      queries: [
        { expr: quantile(0.99, 'workqueue_queue_duration_seconds_bucket', 'name'), legend: '{{name}} p99' },
      ],
      unit: 's',
    },
    {
      title: 'Busy workers',
      description: 'Workers reconciling now against the most each controller runs (maxConcurrentReconciles).',
      kind: 'timeseries',
      queries: [
        {
          expr: `sum by (controller) (controller_runtime_active_workers${operatorSelector})`,
          legend: '{{controller}} busy',
        },
        {
          expr: `sum by (controller) (controller_runtime_max_concurrent_reconciles${operatorSelector})`,
          legend: '{{controller}} max',
        },
      ],
      unit: 'short',
    },
    {
      title: 'Retries and API requests',
      description:
        'Keys requeued with backoff per queue, and the operator’s requests to the API server by HTTP code (403: missing RBAC; 409: a conflicting writer; 429: throttled).',
      kind: 'timeseries',
      queries: [
        { expr: `sum by (name) (${rate('workqueue_retries_total')})`, legend: 'retries {{name}}' },
        { expr: `sum by (code) (${rate('rest_client_requests_total')})`, legend: 'API {{code}}' },
      ],
      unit: 'ops',
    },
  ],
};

type Json = Record<string, unknown>;

function panelJson(spec: PanelSpec, id: number, gridPos: Json): Json {
  const steps = [{ color: spec.thresholds?.base ?? 'green', value: null }, ...(spec.thresholds?.steps ?? [])];
  const mappings = Object.entries(spec.mappings ?? {}).map(([value, text]) => ({
    type: 'value',
    options: { [value]: { text, index: 0 } },
  }));
  return {
    id,
    type: spec.kind,
    title: spec.title,
    description: spec.description,
    datasource,
    gridPos,
    targets: spec.queries.map((q, i) => ({
      refId: String.fromCharCode(65 + i),
      datasource,
      expr: q.expr,
      legendFormat: q.legend,
      range: true,
    })),
    fieldConfig: {
      defaults: {
        unit: spec.unit ?? 'short',
        mappings,
        thresholds: { mode: 'absolute', steps },
        ...(spec.kind === 'timeseries' ? { custom: { lineWidth: 1, fillOpacity: 10 } } : {}),
      },
      overrides: [],
    },
    options:
      spec.kind === 'stat'
        ? {
            reduceOptions: { calcs: ['lastNotNull'], fields: '', values: false },
            colorMode: 'background',
            graphMode: 'none',
            textMode: 'value_and_name',
          }
        : {
            legend: { displayMode: 'list', placement: 'bottom', showLegend: true },
            tooltip: { mode: 'multi', sort: 'desc' },
          },
  };
}

/** Grafana's query variable over `query` (label_values(...)). */
function queryVariable(name: string, label: string, query: string, all: boolean): Json {
  return {
    type: 'query',
    name,
    label,
    datasource,
    definition: query,
    query: { query, refId: `${name}-variable` },
    refresh: 2,
    sort: 1,
    multi: all,
    includeAll: all,
    ...(all ? { allValue: '.*', current: { text: 'All', value: '$__all' } } : {}),
  };
}

/** The dashboard as Grafana imports it (the JSON a chart ships for the Grafana sidecar). */
export function grafanaDashboard(dashboard: OperatorDashboard): Json {
  const panels: Json[] = [];
  let id = 1;
  let y = 0;
  for (const row of [...dashboard.rows, operatorRow]) {
    panels.push({
      id: id++,
      type: 'row',
      title: row.title,
      collapsed: false,
      panels: [],
      gridPos: { h: 1, w: 24, x: 0, y: y++ },
    });
    let x = 0;
    for (const spec of row.panels) {
      const w = spec.width ?? 8;
      if (x + w > 24) {
        x = 0;
        y += 8;
      }
      panels.push(panelJson(spec, id++, { h: 8, w, x, y }));
      x += w;
    }
    y += 8;
  }
  const variables: Json[] = [
    { type: 'datasource', name: 'datasource', label: 'Data source', query: 'prometheus', refresh: 1 },
    queryVariable(
      'job',
      'Operator',
      `label_values(controller_runtime_max_concurrent_reconciles{controller="${dashboard.controller}"}, job)`,
      false,
    ),
  ];
  if (dashboard.clusterMetric) {
    const label = dashboard.clusterLabel ?? 'cluster';
    variables.push(
      queryVariable(
        'namespace',
        'Namespace',
        `label_values(${dashboard.clusterMetric}{job="$job"}, namespace)`,
        true,
      ),
      queryVariable(
        'cluster',
        `${label.charAt(0).toUpperCase()}${label.slice(1)}`,
        `label_values(${dashboard.clusterMetric}{job="$job", namespace=~"$namespace"}, ${label})`,
        true,
      ),
    );
  }
  return {
    uid: dashboard.uid,
    title: dashboard.title,
    description:
      'Generated from the operator’s TypeScript sources (libs/operator-kit/src/chart/grafana-dashboard.ts); shipped by its Helm chart.',
    tags: ['homeostat'],
    editable: true,
    graphTooltip: 1,
    schemaVersion: 39,
    refresh: '30s',
    time: { from: 'now-6h', to: 'now' },
    timezone: 'browser',
    annotations: { list: [] },
    templating: { list: variables },
    panels,
  };
}

/** The dashboard JSON as committed in the chart (before formatting). */
export function grafanaDashboardJson(dashboard: OperatorDashboard): string {
  return `${JSON.stringify(grafanaDashboard(dashboard), null, 2)}\n`;
}
