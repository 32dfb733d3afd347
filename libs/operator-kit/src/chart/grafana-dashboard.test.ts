import { describe, expect, it } from 'vitest';
import { grafanaDashboard, operatorRow, type OperatorDashboard } from './grafana-dashboard.ts';

type Panel = { id: number; type: string; gridPos: { x: number; y: number; w: number; h: number } };
type Variable = { name: string; label: string; definition?: string };

const operatorOnly: OperatorDashboard = { title: 'T', uid: 't', controller: 'widget', rows: [] };
const own: OperatorDashboard = {
  ...operatorOnly,
  clusterMetric: 'widget_ready',
  rows: [
    {
      title: 'Widgets',
      panels: [16, 16, 8].map((width, i) => ({
        title: `p${i}`,
        description: 'd',
        kind: 'timeseries' as const,
        queries: [{ expr: 'widget_ready', legend: '' }],
        width,
      })),
    },
  ],
};

describe('grafanaDashboard', () => {
  it('lays the operator’s rows, then the shared operator row, on the 24-column grid without overlap', () => {
    const panels = (grafanaDashboard(own)['panels'] as Panel[]).filter((p) => p.type !== 'row');
    expect(panels).toHaveLength(3 + operatorRow.panels.length);
    expect(new Set(panels.map((p) => p.id)).size).toBe(panels.length);
    const cells = new Set<string>();
    for (const { gridPos: g } of panels) {
      expect(g.x + g.w).toBeLessThanOrEqual(24);
      for (let x = g.x; x < g.x + g.w; x++)
        for (let y = g.y; y < g.y + g.h; y++) {
          expect(cells.has(`${x},${y}`)).toBe(false);
          cells.add(`${x},${y}`);
        }
    }
  });

  it('has namespace and cluster variables only when the operator has per-cluster series', () => {
    const names = (d: OperatorDashboard) =>
      ((grafanaDashboard(d)['templating'] as { list: Variable[] }).list ?? []).map((v) => v.name);
    expect(names(own)).toEqual(['datasource', 'job', 'namespace', 'cluster']);
    expect(names(operatorOnly)).toEqual(['datasource', 'job']);
  });

  it('lists the resources by the label the operator names them with (clusterLabel), cluster by default', () => {
    const cluster = (d: OperatorDashboard) =>
      (grafanaDashboard(d)['templating'] as { list: Variable[] }).list.find((v) => v.name === 'cluster');
    expect(cluster(own)?.label).toBe('Cluster');
    expect(cluster(own)?.definition).toBe(
      'label_values(widget_ready{job="$job", namespace=~"$namespace"}, cluster)',
    );
    const caches = cluster({ ...own, clusterLabel: 'cache' });
    expect(caches?.label).toBe('Cache');
    expect(caches?.definition).toBe('label_values(widget_ready{job="$job", namespace=~"$namespace"}, cache)');
  });
});
