// The metric names an operator's registry (or any scrape) exports, as Prometheus stores them: a
// histogram's <name>_bucket, _sum and _count, every other family under its own name.
import type { ClusterAccess, Registry } from '@homeostat/reconcile';

/** Every series name `registry` exposes when scraped. */
export async function exportedMetricNames(registry: Registry): Promise<Set<string>> {
  return metricNamesInExposition(await registry.metrics());
}

/** Every series name a scrape that answered `text` (the text exposition format) stores. */
export function metricNamesInExposition(text: string): Set<string> {
  const names = new Set<string>();
  for (const [, name, type] of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    if (!name) continue;
    if (type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(name + suffix);
    else names.add(name);
  }
  return names;
}

/** An API server nothing answers at: enough to build an operator (never start it) and read its registry. */
export const unreachableCluster: ClusterAccess = {
  server: 'https://127.0.0.1:1',
  credentials: () => Promise.resolve({ headers: {} }),
};
