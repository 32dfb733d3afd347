// The chart's opt-in ServiceMonitor for the etcd members' own /metrics: every EtcdCluster's peer
// Service is scraped on its metrics port; the client Service matches the selector too but has no
// metrics port, so it is not.
import { describeOperandServiceMonitor } from '@homeostat/operator-kit/testing';
import type { EtcdCluster } from '../api/etcd-cluster-types.ts';
import { desiredClientService, desiredPeerService } from '../controllers/desired-services.ts';
import { etcdChart } from './etcd-chart.ts';

const cluster = {
  apiVersion: 'etcd.homeostat.dev/v1alpha1',
  kind: 'EtcdCluster',
  metadata: { name: 'orders', namespace: 'shop', uid: 'u' },
  spec: { size: 3 },
} as unknown as EtcdCluster;

describeOperandServiceMonitor({
  chart: etcdChart,
  valuesKey: 'membersServiceMonitor',
  nameSuffix: 'members',
  what: 'every etcd member',
  scraped: () => desiredPeerService(cluster),
  notScraped: () => desiredClientService(cluster),
});
