// The chart's PrometheusRule rendered by the real helm and checked and unit-tested by the real
// promtool; its alerts read only metrics the Memcached operator, built as it runs, exports, or that
// the pods' metrics sidecar (the real binary, next to a real memcached) serves.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  describePrometheusRules,
  metricNamesInExposition,
  unreachableCluster,
} from '@homeostat/operator-kit/testing';
import { memcachedServer } from '../../../../bench/memcached/memcached-process.ts';
import { memcachedExporterBinary, startMemcachedExporter } from '../../exporter/exporter-process.ts';
import { memcachedOperator } from '../operator.ts';
import { testOperatorConfig } from '../test-support/test-operator-config.ts';
import { memcachedChart } from './memcached-chart.ts';

/** The names one scrape of the sidecar serves while its memcached answers. */
async function sidecarMetricNames(): Promise<ReadonlySet<string>> {
  const logDir = mkdtempSync(join(tmpdir(), 'homeostat-memcached-rules-'));
  const memcached = await memcachedServer({ name: 'memcached-0', logDir, memoryMb: 16 });
  try {
    await memcached.start();
    const exporter = await startMemcachedExporter({
      binary: await memcachedExporterBinary(),
      memcachedAddress: memcached.address,
      logDir,
    });
    try {
      return metricNamesInExposition(await (await fetch(exporter.metricsUrl)).text());
    } finally {
      await exporter.process.stop();
    }
  } finally {
    await memcached.stop();
    rmSync(logDir, { recursive: true, force: true });
  }
}

describePrometheusRules(memcachedChart, {
  operator: 'Memcached',
  registry: () => memcachedOperator(unreachableCluster, testOperatorConfig({})).metrics.registry,
  operandMetrics: sidecarMetricNames,
});
