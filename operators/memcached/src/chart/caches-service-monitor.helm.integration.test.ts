// The chart's opt-in ServiceMonitor for every Memcached pod's metrics sidecar: the Service of a
// Memcached with the sidecar is scraped, one without it (no metrics port) is not.
import { describeOperandServiceMonitor } from '@homeostat/operator-kit/testing';
import { desiredService } from '../controllers/desired-service.ts';
import { defaultedSpec } from '../test-support/memcached-fixtures.ts';
import { memcachedChart } from './memcached-chart.ts';

const service = (exporter: boolean) =>
  desiredService({
    apiVersion: 'cache.homeostat.dev/v1alpha1',
    kind: 'Memcached',
    metadata: { name: 'sessions', namespace: 'shop', uid: 'u' },
    spec: defaultedSpec({ exporter: { enabled: exporter } }),
  });

describeOperandServiceMonitor({
  chart: memcachedChart,
  valuesKey: 'cachesServiceMonitor',
  nameSuffix: 'caches',
  what: "every Memcached pod's metrics sidecar",
  scraped: () => service(true),
  notScraped: () => service(false),
});
