// The monitoring addon installed into the cluster under test and its Prometheus's HTTP API, reached
// through the API server's proxy to the Prometheus pod (no port-forward, nothing to clean up).
// On the local cluster the addon's images are built and imported first; any other cluster pulls
// the upstream images under the same names.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { waitUntil } from '@homeostat/testing';
import { paths, stateDir } from '../cluster/layout.ts';
import { note } from '../cluster/progress.ts';
import {
  clusterScopedObjects,
  monitoringNamespace,
  prometheusAddonObjects,
  prometheusName,
  prometheusPod,
  prometheusPort,
} from '../cluster/prometheus-addon.ts';
import { ensureImages } from '../images/build-images.ts';
import { builtComponent } from '../images/image-recipes.ts';
import { monitoringImages } from '../images/image-names.ts';
import { apply, getObject, kubeconfigPath, kubectl } from './cluster-access.ts';

export interface ScrapeTarget {
  scrapePool: string;
  scrapeUrl: string;
  health: 'up' | 'down' | 'unknown';
  lastError: string;
  labels: Record<string, string>;
}

export interface ActiveAlert {
  labels: Record<string, string> & { alertname: string };
  state: 'pending' | 'firing';
  activeAt: string;
}

export interface PrometheusAddon {
  /** The active scrape targets. */
  targets(): Promise<ScrapeTarget[]>;
  /** An instant query's vector: each series' labels (its name under `__name__`) and value. */
  query(promql: string): Promise<{ metric: Record<string, string>; value: number }[]>;
  /** The alerts pending or firing now. */
  alerts(): Promise<ActiveAlert[]>;
  /** Deletes the addon; the CRDs too when this install brought them. */
  remove(): Promise<void>;
}

interface ApiResponse<T> {
  status: 'success' | 'error';
  data: T;
  error?: string;
}

async function api<T>(path: string): Promise<T> {
  const raw = await kubectl([
    'get',
    '--raw',
    `/api/v1/namespaces/${monitoringNamespace}/pods/${prometheusPod}:${prometheusPort}/proxy${path}`,
  ]);
  const response = JSON.parse(raw) as ApiResponse<T>;
  if (response.status !== 'success') throw new Error(`Prometheus ${path}: ${response.error ?? raw}`);
  return response.data;
}

const onLocalCluster = () => existsSync(paths.ready) && kubeconfigPath() === paths.kubeconfig;

/** The Prometheus Operator's CRDs, from its Go module at the pinned version (put beside the binary when it is built). */
async function prometheusOperatorCrds(): Promise<string> {
  return join(dirname(await builtComponent('prometheus-operator')), 'crds');
}

/**
 * Installs (or converges) the addon and waits until its Prometheus answers: the operator's CRDs,
 * the operator, and a Prometheus that selects every ServiceMonitor and PrometheusRule.
 */
export async function installPrometheusAddon(): Promise<PrometheusAddon> {
  if (onLocalCluster()) {
    await ensureImages({
      refs: Object.values(monitoringImages),
      containerd: { socket: paths.containerdSocket, importedRecord: join(stateDir, 'imported-images.json') },
      log: note,
    });
  }
  const crdDir = await prometheusOperatorCrds();
  const crdNames = (await kubectl(['apply', '--dry-run=client', '-f', crdDir, '-o', 'name']))
    .split('\n')
    .filter(Boolean);
  const crdsPresent = await Promise.all(
    crdNames.map((n) => kubectl(['get', n, '--ignore-not-found', '-o', 'name'])),
  );
  const crdsInstalledHere = crdsPresent.every((out) => out.trim() === '');
  // Server-side: the CRDs are too large for the annotation a client-side apply keeps.
  await kubectl([
    'apply',
    '--server-side',
    '--force-conflicts',
    '--field-manager=homeostat-e2e',
    '-f',
    crdDir,
  ]);
  await kubectl(['wait', '--for=condition=Established', '--timeout=60s', ...crdNames]);
  await apply(prometheusAddonObjects());
  await kubectl([
    '-n',
    monitoringNamespace,
    'rollout',
    'status',
    'deployment/prometheus-operator',
    '--timeout=180s',
  ]);
  await waitUntil(
    `Prometheus ${monitoringNamespace}/${prometheusPod} ready`,
    async () => {
      const pod = await getObject<{ status?: { conditions?: { type: string; status: string }[] } }>(
        'pod',
        prometheusPod,
        monitoringNamespace,
      );
      return pod?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
    },
    { timeoutMs: 240_000, intervalMs: 1000 },
  );

  return {
    targets: async () =>
      (await api<{ activeTargets: ScrapeTarget[] }>('/api/v1/targets?state=active')).activeTargets,
    query: async (promql) =>
      (
        await api<{ result: { metric: Record<string, string>; value: [number, string] }[] }>(
          `/api/v1/query?query=${encodeURIComponent(promql)}`,
        )
      ).result.map((r) => ({ metric: r.metric, value: Number(r.value[1]) })),
    alerts: async () => (await api<{ alerts: ActiveAlert[] }>('/api/v1/alerts')).alerts,
    remove: async () => {
      // The Prometheus first, while its operator still runs to see it go.
      await kubectl([
        '-n',
        monitoringNamespace,
        'delete',
        'prometheus',
        prometheusName,
        '--ignore-not-found',
        '--wait=true',
      ]);
      await kubectl([
        'delete',
        'namespace',
        monitoringNamespace,
        '--ignore-not-found',
        '--wait=true',
        '--timeout=180s',
      ]);
      for (const { kind, name } of clusterScopedObjects)
        await kubectl(['delete', kind, name, '--ignore-not-found']);
      if (crdsInstalledHere) await kubectl(['delete', '--ignore-not-found', '--wait=true', ...crdNames]);
    },
  };
}
