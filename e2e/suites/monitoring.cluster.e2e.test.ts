// Runs against the cluster in KUBECONFIG, opt-in (`npm run e2e -- monitoring`, e2e/README.md): the
// monitoring addon (a Prometheus Operator and a Prometheus built here, ADR 0016), the three
// operators installed from their charts with their ServiceMonitors and PrometheusRules on, and one
// small sample of each. Then, from the real Prometheus's HTTP API: every target is up; every
// metric each operator's registry exports (the names its guide documents and its chart's alert
// tests read) and every metric the Memcached pods' sidecar serves is stored; and one alert per
// operator, exactly as its chart ships it, fires after the fault it is about and resolves after
// the fault ends. Its alerts wait their full `for` (3 to 5 minutes): the faults run side by side.
import type { V1Deployment, V1Pod } from '@kubernetes/client-node';
import { exportedMetricNames, metricNamesInExposition } from '@homeostat/operator-kit/testing';
import { operatorMetricsRegistry as etcdRegistry } from '@homeostat/etcd-operator/test-support/metrics-registry';
import { operatorMetricsRegistry as memcachedRegistry } from '@homeostat/memcached-operator/test-support/metrics-registry';
import { operatorMetricsRegistry as postgresRegistry } from '@homeostat/postgres-operator/test-support/metrics-registry';
import type { Registry } from '@homeostat/reconcile';
import { waitUntil } from '@homeostat/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apply, kubectl, listObjects } from '../harness/cluster-access.ts';
import { operatorCharts, type OperatorChartRef } from '../harness/operator-charts.ts';
import { installOperator, type OperatorRelease } from '../harness/operator-release.ts';
import { installPrometheusAddon, type ActiveAlert, type PrometheusAddon } from '../harness/prometheus.ts';
import { createTestNamespace, type TestNamespace } from '../harness/test-namespace.ts';

const scrapeEvery = '5s';
const serviceMonitorValues = (...monitors: string[]) =>
  Object.fromEntries(
    ['prometheus.serviceMonitor', ...monitors].flatMap((m) => [
      [`${m}.enabled`, 'true'],
      [`${m}.interval`, scrapeEvery],
    ]),
  );

interface Operator {
  chart: OperatorChartRef;
  /** The chart's values beyond the operator's ServiceMonitor and PrometheusRule. */
  monitors: string[];
  registry: () => Registry;
  /** One small sample. */
  sample: (namespace: string) => object;
  resource: string;
}

const operators: Operator[] = [
  {
    chart: operatorCharts.memcached,
    monitors: ['cachesServiceMonitor'],
    registry: memcachedRegistry,
    sample: (namespace) => ({
      apiVersion: 'cache.homeostat.dev/v1alpha1',
      kind: 'Memcached',
      metadata: { name: 'sessions', namespace },
      spec: { size: 1, memoryLimitMB: 32 },
    }),
    resource: 'memcached/sessions',
  },
  {
    chart: operatorCharts.etcd,
    monitors: ['membersServiceMonitor'],
    registry: etcdRegistry,
    sample: (namespace) => ({
      apiVersion: 'etcd.homeostat.dev/v1alpha1',
      kind: 'EtcdCluster',
      metadata: { name: 'orders', namespace },
      spec: { size: 1, storage: { size: '1Gi' }, resources: { requests: { cpu: '50m', memory: '64Mi' } } },
    }),
    resource: 'etcdcluster/orders',
  },
  {
    chart: operatorCharts.postgres,
    monitors: [],
    registry: postgresRegistry,
    sample: (namespace) => ({
      apiVersion: 'postgres.homeostat.dev/v1alpha1',
      kind: 'PostgreSQLCluster',
      metadata: { name: 'accounts', namespace },
      spec: {
        instances: 1,
        postgresVersion: 18,
        storage: { size: '1Gi' },
        postgresql: { parameters: { shared_buffers: '16MB', max_connections: '50' } },
      },
    }),
    resource: 'postgresqlcluster/accounts',
  },
];

/**
 * Names a registry declares that no series carries until something happens which a fresh sample
 * never does, with why: the suite fails when one of them appears (then it belongs in Prometheus
 * and leaves this list) or when another is missing.
 */
const everyOperatorOnlyAfter = {
  controller_runtime_reconcile_errors_total: 'a reconcile that fails',
  workqueue_retries_total: 'a key put back on the queue after a failure',
};
const seriesOnlyAfter: Record<string, Record<string, string>> = {
  [operatorCharts.memcached.name]: everyOperatorOnlyAfter,
  [operatorCharts.etcd.name]: {
    ...everyOperatorOnlyAfter,
    etcd_cluster_last_backup_age_seconds: 'a first backup',
    etcd_cluster_backup_verified: 'a first restore drill',
    etcd_cluster_backup_drill_restore_seconds: 'a first restore drill',
    etcd_cluster_backup_drill_recovery_point_seconds: 'a first restore drill',
    etcd_cluster_backup_drills_total: 'a first restore drill',
  },
  [operatorCharts.postgres.name]: {
    ...everyOperatorOnlyAfter,
    homeostat_postgres_replication_lag_bytes: 'a replica (the sample has one instance)',
    homeostat_postgres_wal_archive_age_seconds: 'spec.backup',
    homeostat_postgres_wal_archive_failing: 'spec.backup',
    homeostat_postgres_backup_verified_timestamp_seconds: 'a first restore drill',
    homeostat_postgres_restore_drill_duration_seconds: 'a first restore drill',
    homeostat_postgres_restore_drill_failing: 'a first restore drill',
  },
};

const secondsSince = (start: number) => ((Date.now() - start) / 1000).toFixed(1);

describe('Prometheus scrapes the operators and evaluates their alerts, on the cluster in KUBECONFIG', () => {
  let prometheus: PrometheusAddon;
  let namespace: TestNamespace;
  let ns: string;
  const releases: OperatorRelease[] = [];
  const job = (chart: OperatorChartRef) => `${chart.name}-metrics`;

  beforeAll(async () => {
    const started = Date.now();
    prometheus = await installPrometheusAddon();
    console.error(`monitoring addon up in ${secondsSince(started)} s`);
    namespace = await createTestNamespace('e2e-monitoring');
    ns = namespace.name;
    for (const { chart, monitors } of operators) {
      releases.push(
        await installOperator(chart, ns, {
          ...serviceMonitorValues(...monitors),
          'prometheus.prometheusRule.enabled': 'true',
        }),
      );
    }
    await apply(operators.map((o) => o.sample(ns)));
    await kubectl([
      '-n',
      ns,
      'wait',
      '--for=condition=Available',
      '--timeout=300s',
      ...operators.map((o) => o.resource),
    ]);
    console.error(`addon, operators and samples ready in ${secondsSince(started)} s`);
    // A cold start builds the addon's binaries and images first.
  }, 3_600_000);

  afterAll(async () => {
    for (const release of releases) await release.cleanup();
    await namespace?.remove();
    await prometheus?.remove();
  }, 600_000);

  it('scrapes every ServiceMonitor the charts made, and every target is up', async () => {
    const monitors = (await listObjects<{ metadata: { name: string } }>('servicemonitors', ns)).map(
      (m) => m.metadata.name,
    );
    // The operators' three, the Memcached pods' and the etcd members'.
    expect(monitors).toHaveLength(5);
    const pools = monitors.map((name) => `serviceMonitor/${ns}/${name}/0`);
    let summary = '';
    await waitUntil(
      'every ServiceMonitor has targets, all up',
      async () => {
        const targets = await prometheus.targets();
        summary = targets.map((t) => `${t.scrapePool} ${t.scrapeUrl} ${t.health} ${t.lastError}`).join('\n');
        return (
          pools.every((pool) => targets.some((t) => t.scrapePool === pool)) &&
          targets.every((t) => t.health === 'up')
        );
      },
      { timeoutMs: 180_000, intervalMs: 2000, describe: () => summary },
    );
  });

  it('stores every metric each operator exports, and every metric the Memcached sidecar serves', async () => {
    const storedNames = async (selector: string) =>
      new Set(
        (await prometheus.query(`group by (__name__) (${selector})`)).map((s) => s.metric['__name__'] ?? ''),
      );
    for (const { chart, registry } of operators) {
      const declared = [...(await exportedMetricNames(registry()))];
      const selector = `{job="${job(chart)}", namespace="${ns}"}`;
      let missing: string[] = [];
      await waitUntil(
        `${chart.name}: every metric in Prometheus`,
        async () => {
          const stored = await storedNames(selector);
          missing = declared.filter((name) => !stored.has(name));
          return missing.every((name) => name in (seriesOnlyAfter[chart.name] ?? {}));
        },
        { timeoutMs: 60_000, intervalMs: 2000, describe: () => `missing: ${missing.join(', ')}` },
      ).catch(() => undefined);
      expect(missing.sort(), `${chart.name}: metrics with no series in Prometheus`).toEqual(
        Object.keys(seriesOnlyAfter[chart.name] ?? {}).sort(),
      );
    }

    const [cachePod] = await listObjects<V1Pod>(
      'pods',
      ns,
      'app.kubernetes.io/name=memcached,app.kubernetes.io/instance=sessions',
    );
    const pod = cachePod?.metadata?.name ?? '';
    // The sidecar scraped directly, through the API server's proxy: what it serves now.
    const served = metricNamesInExposition(
      await kubectl(['get', '--raw', `/api/v1/namespaces/${ns}/pods/${pod}:9150/proxy/metrics`]),
    );
    expect(served.size).toBeGreaterThan(10);
    const stored = await storedNames(`{namespace="${ns}", pod="${pod}", container="exporter"}`);
    expect([...served].filter((name) => !stored.has(name))).toEqual([]);

    // The etcd members' own metrics, which the guide names for the alerts it does not have yet.
    const hasLeader = await prometheus.query(`etcd_server_has_leader{namespace="${ns}"}`);
    expect(hasLeader.map((s) => s.value)).toEqual([1]);
  });

  it('fires one alert per operator after its fault, and resolves it after the fault ends', async () => {
    const deploymentOf = async (chart: OperatorChartRef) => {
      const [deployment] = await listObjects<V1Deployment>(
        'deployments',
        ns,
        `app.kubernetes.io/instance=${chart.name}`,
      );
      return `deployment/${deployment?.metadata?.name ?? chart.name}`;
    };
    const faults = [
      {
        // A cache whose pod no node can take: the operator reports 0 of 1 ready.
        alert: 'MemcachedCacheDown',
        matches: (a: ActiveAlert) => a.labels['namespace'] === ns && a.labels['cache'] === 'unplaced',
        start: () =>
          apply([
            {
              apiVersion: 'cache.homeostat.dev/v1alpha1',
              kind: 'Memcached',
              metadata: { name: 'unplaced', namespace: ns },
              spec: { size: 1, memoryLimitMB: 32, resources: { requests: { cpu: '512' } } },
            },
          ]),
        end: () =>
          kubectl([
            '-n',
            ns,
            'patch',
            'memcached/unplaced',
            '--type=merge',
            '-p',
            JSON.stringify({ spec: { resources: { requests: { cpu: '10m' } } } }),
          ]),
      },
      ...[operatorCharts.etcd, operatorCharts.postgres].map((chart) => ({
        // The operator scaled to no pod: its target is gone, so no `up` of its job is 1.
        alert: chart === operatorCharts.etcd ? 'EtcdOperatorDown' : 'PostgresOperatorDown',
        matches: (a: ActiveAlert) => a.labels['namespace'] === ns && a.labels['job'] === job(chart),
        start: async () => kubectl(['-n', ns, 'scale', await deploymentOf(chart), '--replicas=0']),
        end: async () => kubectl(['-n', ns, 'scale', await deploymentOf(chart), '--replicas=1']),
      })),
    ];
    let alerts: ActiveAlert[] = [];
    /** For each fault, whether its alert is active now (in `state`, when given). */
    const active = async (state?: ActiveAlert['state']) => {
      alerts = await prometheus.alerts();
      return faults.map((f) =>
        alerts.some((a) => a.labels.alertname === f.alert && f.matches(a) && (!state || a.state === state)),
      );
    };
    /** Waits until `reached` has said yes for every fault; the seconds after `since` each first did. */
    const secondsUntilEach = async (what: string, since: number, reached: () => Promise<boolean[]>) => {
      const seconds: Record<string, string> = {};
      await waitUntil(
        what,
        async () => {
          (await reached()).forEach((yes, i) => {
            if (yes) seconds[faults[i]?.alert ?? ''] ??= secondsSince(since);
          });
          return Object.keys(seconds).length === faults.length;
        },
        {
          timeoutMs: 600_000,
          intervalMs: 2000,
          describe: () =>
            alerts.map((a) => `${a.labels.alertname} ${a.state} ${JSON.stringify(a.labels)}`).join('\n'),
        },
      );
      return JSON.stringify(seconds);
    };

    // Quiet before the faults: an OperatorDown pending from before its target's first scrape
    // clears at the next evaluation after it.
    await waitUntil('no alert before its fault', async () => (await active()).every((a) => !a), {
      timeoutMs: 120_000,
      intervalMs: 2000,
    });
    const faulted = Date.now();
    for (const fault of faults) await fault.start();
    const fired = await secondsUntilEach('each alert firing', faulted, () => active('firing'));
    console.error(`monitoring e2e: firing after the faults began: ${fired} s`);

    const ended = Date.now();
    for (const fault of faults) await fault.end();
    const resolved = await secondsUntilEach('each alert resolved', ended, async () =>
      (await active()).map((still) => !still),
    );
    console.error(`monitoring e2e: resolved after the faults ended: ${resolved} s`);
  }, 1_200_000);
});
