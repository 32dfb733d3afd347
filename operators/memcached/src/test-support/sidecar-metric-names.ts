// The names the pods' metrics sidecar serves: one scrape of the real exporter binary next to a real
// memcached, for the chart tests that check alerts and dashboard panels read only real series.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { metricNamesInExposition } from '@homeostat/operator-kit/testing';
import { memcachedServer } from '../../../../bench/memcached/memcached-process.ts';
import { memcachedExporterBinary, startMemcachedExporter } from '../../exporter/exporter-process.ts';

/** The names one scrape of the sidecar serves while its memcached answers. */
export async function sidecarMetricNames(): Promise<ReadonlySet<string>> {
  const logDir = mkdtempSync(join(tmpdir(), 'homeostat-memcached-sidecar-'));
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
