// The Memcached operator's Grafana dashboard: only the operator's own panels so far. The gauges per
// Memcached (label `cache`, where the shared cluster variables read `cluster`) and the pods' sidecar
// series feed the chart's alerts, not yet a row here.
import type { OperatorDashboard } from '@homeostat/operator-kit/chart';

export const memcachedDashboard: OperatorDashboard = {
  title: 'Homeostat / Memcached operator',
  uid: 'homeostat-memcached-operator',
  controller: 'memcached',
  rows: [],
};
