// The Memcached operator's Grafana dashboard: only the operator's own panels, because the operator
// exports no series per Memcached (no namespace or cluster variable either). Pods missing and
// evictions need the memcached exporter's metrics, which this chart does not ship.
import type { OperatorDashboard } from '@homeostat/operator-kit/chart';

export const memcachedDashboard: OperatorDashboard = {
  title: 'Homeostat / Memcached operator',
  uid: 'homeostat-memcached-operator',
  controller: 'memcached',
  rows: [],
};
