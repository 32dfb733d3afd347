// An operator installed from its chart, as a user installs it, into a suite's namespace and
// watching only that namespace (another release of the operator in the cluster keeps its own objects).
import { getObject, kubectl } from './cluster-access.ts';
import { helm, installableChart } from './helm.ts';
import { chartDir, type OperatorChartRef } from './operator-charts.ts';

export interface OperatorRelease {
  release: string;
  namespace: string;
  /** helm uninstall (waits until its objects are gone). */
  uninstall(): Promise<void>;
  /**
   * `helm test`: the chart's test pod checks that the operator answers and reconciles a resource it
   * creates; throws unless it passed and left neither its pod nor its `resource` (e.g. "memcacheds").
   */
  passesHelmTest(resource: string): Promise<void>;
  /** Uninstalls if still installed, and deletes the CRDs if this release brought them. */
  cleanup(): Promise<void>;
}

/** `helm install` into `namespace`, waiting until the operator is Ready; `values` are `--set` pairs. */
export async function installOperator(
  chart: OperatorChartRef,
  namespace: string,
  values: Record<string, string | number> = {},
): Promise<OperatorRelease> {
  const release = chart.name;
  // The CRDs have helm.sh/resource-policy: keep, so a cluster may hold them from an earlier
  // install; then this release leaves them alone, and cleanup removes only CRDs it installed.
  const present = await Promise.all(
    chart.crds.map(async (crd) => (await getObject('customresourcedefinition', crd)) !== undefined),
  );
  if (present.some(Boolean) && !present.every(Boolean)) {
    throw new Error(
      `${chart.name}: only some of its CRDs are installed (${chart.crds.filter((_, i) => present[i]).join(', ')}); delete them or install the rest`,
    );
  }
  const crdsInstalledHere = !present.some(Boolean);
  await helm([
    'install',
    release,
    await installableChart(chartDir(chart)),
    '--namespace',
    namespace,
    '--wait',
    '--timeout',
    '180s',
    '--set-json',
    `watchNamespaces=${JSON.stringify([namespace])}`,
    '--set',
    `crds.enabled=${crdsInstalledHere}`,
    ...Object.entries(values).flatMap(([key, value]) => ['--set', `${key}=${value}`]),
  ]);
  let installed = true;
  const uninstall = async () => {
    await helm(['uninstall', release, '--namespace', namespace, '--wait', '--timeout', '120s']);
    installed = false;
  };
  return {
    release,
    namespace,
    uninstall,
    passesHelmTest: async (resource) => {
      const output = await helm(['test', release, '--namespace', namespace, '--timeout', '300s']);
      if (!/Phase:\s+Succeeded/.test(output))
        throw new Error(`helm test ${release} did not pass:\n${output}`);
      // Named after the release's full name, which is the release's (it contains the chart's name).
      const name = `${release}-helm-test`;
      for (const kind of ['pod', resource]) {
        if (await getObject(kind, name, namespace))
          throw new Error(`helm test ${release} left ${kind} ${name}`);
      }
    },
    cleanup: async () => {
      if (installed) await uninstall().catch(() => undefined);
      if (crdsInstalledHere)
        await kubectl(['delete', 'crd', ...chart.crds, '--ignore-not-found', '--wait=true']);
    },
  };
}
