// Each operator's chart as the suites and `npm start` install it: an operator joins by a line here.
import { join } from 'node:path';
import { repoRoot } from '@homeostat/testing';

export interface OperatorChartRef {
  /** The chart's name, its folder under charts/ and the Helm release name. */
  name: string;
  /** Its CRDs, which carry helm.sh/resource-policy: keep and may outlive a release. */
  crds: readonly string[];
}

export const operatorCharts = {
  memcached: { name: 'memcached-operator', crds: ['memcacheds.cache.homeostat.dev'] },
  etcd: {
    name: 'etcd-operator',
    crds: ['etcdclusters.etcd.homeostat.dev', 'etcdbackups.etcd.homeostat.dev'],
  },
  postgres: {
    name: 'postgres-operator',
    crds: ['postgresqlclusters.postgres.homeostat.dev', 'postgresqlbackups.postgres.homeostat.dev'],
  },
} as const satisfies Record<string, OperatorChartRef>;

/** The chart's folder in the repository. */
export const chartDir = (chart: OperatorChartRef): string => join(repoRoot, 'charts', chart.name);
