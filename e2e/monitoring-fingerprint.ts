// The fingerprint of what the opt-in monitoring suite checks: the charts' alert rules,
// ServiceMonitors and dashboards, the suite itself and the Prometheus addon it installs. CI runs
// the suite (minutes of alerts' `for`) once per fingerprint rather than on every run, so a change
// to any of these files is what makes it run again (e2e/run-monitoring-if-changed.ts).
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join, matchesGlob } from 'node:path';

/**
 * Globs over the repository's files. Kept to what decides the suite's outcome and changes for
 * that reason only: the operators' code behind their metrics (and each metrics registry, which
 * builds a whole operator) changes on most commits and would make the suite run on every one.
 */
export const monitoringSuiteInputGlobs: readonly string[] = [
  // Alert rules: each chart's groups and the library template that wraps them in a PrometheusRule.
  'charts/*/templates/_alerts.tpl',
  'charts/*/templates/prometheusrule.yaml',
  'charts/homeostat-operator-lib/templates/_prometheusrule.tpl',
  // ServiceMonitors and the metrics Service they select.
  'charts/*/templates/servicemonitor*.yaml',
  'charts/homeostat-operator-lib/templates/_metrics.tpl',
  // Dashboards: their sources, the generated JSON and the ConfigMap templates.
  'operators/*/src/chart/*-dashboard.ts',
  'libs/operator-kit/src/chart/grafana-dashboard.ts',
  'charts/*/dashboards/*.json',
  'charts/*/templates/grafana-dashboard.yaml',
  'charts/homeostat-operator-lib/templates/_grafanadashboard.tpl',
  // The suite, the addon it installs and the pinned Prometheus and Prometheus Operator it builds.
  'e2e/suites/monitoring.cluster.e2e.test.ts',
  'e2e/harness/prometheus.ts',
  'e2e/cluster/prometheus-addon.ts',
  'e2e/images/prometheus*/Dockerfile',
  'tools/prometheus/go.*',
  'tools/prometheus-operator/go.*',
];

export interface FileContent {
  /** Relative to the repository root, with forward slashes. */
  path: string;
  content: Buffer | string;
}

/**
 * The files of `root` that `globs` match, sorted: git's tracked files and the untracked ones it
 * does not ignore (a rule file not committed yet counts), less those deleted from the work tree.
 */
export function matchingFiles(root: string, globs: readonly string[]): string[] {
  const listed = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z'], {
    cwd: root,
    encoding: 'utf8',
  });
  const paths = new Set(listed.split('\0').filter((path) => path !== ''));
  return [...paths]
    .filter((path) => globs.some((glob) => matchesGlob(path, glob)))
    .filter((path) => existsSync(join(root, path)))
    .sort();
}

/**
 * sha256 (hex) of the files in path order, each as its path and its content's own sha256, so
 * that a rename changes it as much as an edit does and no two lists hash alike by concatenation.
 */
export function fingerprintOf(files: readonly FileContent[]): string {
  const sorted = [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const hash = createHash('sha256');
  for (const { path, content } of sorted) {
    hash.update(`${path}\0${createHash('sha256').update(content).digest('hex')}\n`);
  }
  return hash.digest('hex');
}

export interface MonitoringFingerprint {
  fingerprint: string;
  files: string[];
}

/** The monitoring suite's inputs in `root` (a checkout of this repository) and their fingerprint. */
export function monitoringFingerprint(
  root: string,
  globs: readonly string[] = monitoringSuiteInputGlobs,
): MonitoringFingerprint {
  const files = matchingFiles(root, globs);
  return {
    fingerprint: fingerprintOf(files.map((path) => ({ path, content: readFileSync(join(root, path)) }))),
    files,
  };
}
