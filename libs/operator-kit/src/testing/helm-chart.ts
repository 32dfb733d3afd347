// The real helm against an operator chart, as the chart tests run it.
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { parseAllDocuments } from 'yaml';
import { binaryPath, kubernetesVersion } from '@homeostat/testing';
import { chartPaths, type OperatorChart } from '../chart/operator-chart.ts';

/** A rendered Kubernetes object, read loosely: tests pick the fields they check. */
export type RenderedObject = { kind?: string; metadata?: { name?: string }; [key: string]: unknown };

/** Runs helm; the result carries stdout, stderr and the exit status. */
export function helm(args: readonly string[]): SpawnSyncReturns<string> {
  return spawnSync(binaryPath('helm'), args, { encoding: 'utf8' });
}

/**
 * Vendors the chart's dependencies (the homeostat-operator-lib library chart) into its charts/
 * folder, as a user does before installing from a clone (ADR 0010). Throws with helm's output.
 */
export function buildChartDependencies(chart: OperatorChart): void {
  const built = helm(['dependency', 'build', chartPaths(chart).dir]);
  if (built.status !== 0) {
    throw new Error(`helm dependency build ${chart.name} failed:\n${built.stderr}${built.stdout}`);
  }
}

/**
 * A vitest global setup that builds the chart's dependencies once, before any test file renders
 * the chart (two files building at once would race in its charts/ folder). Use it from a file
 * named in `test.globalSetup`: export default chartDependenciesGlobalSetup(myChart);
 */
export function chartDependenciesGlobalSetup(chart: OperatorChart): () => void {
  return () => buildChartDependencies(chart);
}

/** `helm template` of the chart (or of `source`, e.g. a packaged .tgz) at the pinned Kubernetes version. */
export function helmTemplate(
  chart: OperatorChart,
  release: string,
  namespace: string,
  args: readonly string[] = [],
  source = chartPaths(chart).dir,
): SpawnSyncReturns<string> {
  return helm([
    'template',
    release,
    source,
    '--namespace',
    namespace,
    '--kube-version',
    kubernetesVersion,
    ...args,
  ]);
}

/** The objects of a rendering, empty documents dropped. */
export function renderedObjects(manifests: string): RenderedObject[] {
  return parseAllDocuments(manifests)
    .map((d) => d.toJS() as RenderedObject | null)
    .filter((d): d is RenderedObject => d !== null);
}
