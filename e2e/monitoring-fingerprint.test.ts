import { execFileSync } from 'node:child_process';
import {
  appendFileSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { repoRoot } from '@homeostat/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operatorCharts } from './harness/operator-charts.ts';
import { fingerprintOf, matchingFiles, monitoringFingerprint } from './monitoring-fingerprint.ts';

const charts = Object.values(operatorCharts).map((chart) => chart.name);

describe('the monitoring suite inputs in this repository', () => {
  const { files } = monitoringFingerprint(repoRoot);

  it.each(charts)('include the alert rules, PrometheusRule and ServiceMonitors of %s', (chart) => {
    // A rename that drops one of these from the globs would let a rule change skip the suite.
    expect(files).toContain(`charts/${chart}/templates/_alerts.tpl`);
    expect(files).toContain(`charts/${chart}/templates/prometheusrule.yaml`);
    expect(files).toContain(`charts/${chart}/templates/servicemonitor.yaml`);
    expect(files).toContain(`charts/${chart}/dashboards/${chart}.json`);
  });

  it('include every chart template that makes or uses alerts, ServiceMonitors or dashboards', () => {
    // Found by content, so a template added under another name is caught as well.
    const makesOrUses =
      /kind: (PrometheusRule|ServiceMonitor)\b|(define|include) "[^"]*(alert|servicemonitor|prometheusrule|grafanadashboard)/i;
    const defining = matchingFiles(repoRoot, ['charts/*/templates/**']).filter((path) =>
      makesOrUses.test(readFileSync(join(repoRoot, path), 'utf8')),
    );
    expect(defining.length).toBeGreaterThan(charts.length);
    expect(defining.filter((path) => !files.includes(path))).toEqual([]);
  });

  it('include the suite itself and the addon it installs', () => {
    expect(files).toContain('e2e/suites/monitoring.cluster.e2e.test.ts');
    expect(files).toContain('e2e/cluster/prometheus-addon.ts');
    expect(files).toContain('tools/prometheus/go.mod');
  });
});

describe('the monitoring fingerprint, on a copy of the inputs in a git work tree of its own', () => {
  let copy: string;
  const rules = `charts/${operatorCharts.memcached.name}/templates/_alerts.tpl`;
  const fingerprint = () => monitoringFingerprint(copy).fingerprint;

  beforeAll(() => {
    copy = mkdtempSync(join(tmpdir(), 'monitoring-fingerprint-'));
    for (const path of [...monitoringFingerprint(repoRoot).files, 'README.md']) {
      mkdirSync(dirname(join(copy, path)), { recursive: true });
      cpSync(join(repoRoot, path), join(copy, path));
    }
    execFileSync('git', ['init', '--quiet'], { cwd: copy });
  });
  afterAll(() => rmSync(copy, { recursive: true, force: true }));

  it('is that of the repository, and equal when computed again', () => {
    expect(fingerprint()).toBe(monitoringFingerprint(repoRoot).fingerprint);
    expect(fingerprint()).toBe(fingerprint());
  });

  it('changes when a rule file changes, and comes back when the change is undone', () => {
    const before = fingerprint();
    const original = readFileSync(join(copy, rules));
    appendFileSync(join(copy, rules), '\n{{/* a changed rule */}}\n');
    expect(fingerprint()).not.toBe(before);
    writeFileSync(join(copy, rules), original);
    expect(fingerprint()).toBe(before);
  });

  it('changes when a rule file is renamed out of the inputs', () => {
    const before = fingerprint();
    renameSync(join(copy, rules), join(copy, `${rules}.old`));
    try {
      expect(monitoringFingerprint(copy).files).not.toContain(rules);
      expect(fingerprint()).not.toBe(before);
    } finally {
      renameSync(join(copy, `${rules}.old`), join(copy, rules));
    }
  });

  it('stays equal when a file outside the inputs changes', () => {
    const before = fingerprint();
    appendFileSync(join(copy, 'README.md'), '\nanother line\n');
    expect(fingerprint()).toBe(before);
  });
});

describe('fingerprintOf', () => {
  const a = { path: 'a.yaml', content: 'alert: A' };
  const b = { path: 'b.yaml', content: 'alert: B' };

  it('does not depend on the order the files are given in', () => {
    expect(fingerprintOf([a, b])).toBe(fingerprintOf([b, a]));
  });

  it('tells a moved content from an unchanged one', () => {
    expect(fingerprintOf([a, b])).not.toBe(
      fingerprintOf([
        { ...a, content: b.content },
        { ...b, content: a.content },
      ]),
    );
    expect(fingerprintOf([a])).not.toBe(fingerprintOf([{ ...a, path: 'c.yaml' }]));
  });
});
