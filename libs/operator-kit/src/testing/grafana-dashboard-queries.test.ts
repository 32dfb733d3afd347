import { describe, expect, it } from 'vitest';
import { dashboardMetricNames, dashboardQueries, variablesIn } from './grafana-dashboard-queries.ts';

describe('dashboard queries', () => {
  it('finds the panels’ queries, nested in rows too, and the selectors of label_values variables', () => {
    const queries = dashboardQueries({
      panels: [
        { title: 'a', targets: [{ expr: 'up{job="$job"}' }] },
        { title: 'row', type: 'row', panels: [{ title: 'b', targets: [{ expr: 'x_total' }] }] },
      ],
      templating: {
        list: [
          { name: 'datasource', type: 'datasource', query: 'prometheus' },
          { name: 'job', type: 'query', query: { query: 'label_values(y{controller="c"}, job)' } },
        ],
      },
    });
    expect(queries).toEqual([
      { where: 'panel a', expr: 'up{job="$job"}' },
      { where: 'panel b', expr: 'x_total' },
      { where: 'variable job', expr: 'y{controller="c"}' },
    ]);
  });

  it('refuses a variable that reads every metric', () => {
    expect(() =>
      dashboardQueries({
        templating: { list: [{ name: 'n', type: 'query', query: 'label_values(namespace)' }] },
      }),
    ).toThrow(/label_values/);
  });

  it('reads metric names past Grafana variables, and lists the variables', () => {
    const expr =
      'histogram_quantile(0.99, sum by (le) (rate(t_bucket{job="$job"}[$__rate_interval]))) > $limit';
    expect(dashboardMetricNames(expr)).toEqual(['t_bucket']);
    expect(variablesIn(`${expr} \${datasource}`)).toEqual(['job', 'limit', 'datasource']);
  });
});
