// The checks every operator chart's PrometheusRule passes, with the real helm and promtool: opt-in,
// valid rules (promtool check rules), every alert with a severity, a summary and a description,
// every alert seen firing and seen not firing by the promtool unit tests stored beside the rules
// (charts/<chart>/promtool/ and, for the alerts every operator shares,
// charts/homeostat-operator-lib/promtool/), unit tests that fail when an alert never fires or
// fires without waiting, and rules that read only metrics the operator exports.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import type { Registry } from '@homeostat/reconcile';
import { binaryPath } from '@homeostat/testing';
import { chartPaths, repoRoot, type OperatorChart } from '../chart/operator-chart.ts';
import { exportedMetricNames } from './exported-metric-names.ts';
import { helmTemplate, renderedObjects, type RenderedObject } from './helm-chart.ts';
import { metricNamesIn } from './promql-metric-names.ts';

export interface PrometheusRulesOptions {
  /** The operand's name as the shared alerts' text says it, e.g. "PostgreSQL". */
  operator: string;
  /** The metrics registry of the operator built as it runs (not started). */
  registry: () => Registry;
  /**
   * The names the operand's own metrics endpoint exports (a sidecar's, scraped for real), for the
   * alerts on its series; without it, rules may read only the operator's metrics.
   */
  operandMetrics?: () => Promise<ReadonlySet<string>>;
}

interface AlertRule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
interface RuleGroup {
  name: string;
  rules: AlertRule[];
}
interface UnitTests {
  tests: { name: string; alert_rule_test?: { alertname: string; exp_alerts?: unknown[] }[] }[];
}

const release = 'alerts';
const namespace = 'ops';
/** Series Prometheus itself makes for every target. */
const scrapeSeries = new Set(['up']);

/** Registers the PrometheusRule tests of `chart`; needs its dependencies built (chartDependenciesGlobalSetup). */
export function describePrometheusRules(chart: OperatorChart, options: PrometheusRulesOptions): void {
  const fullname = `${release}-${chart.name}`;
  const job = `${fullname}-metrics`;
  const enabled = [
    '--set',
    'prometheus.serviceMonitor.enabled=true',
    '--set',
    'prometheus.prometheusRule.enabled=true',
  ];
  const render = (...args: string[]) => {
    const out = helmTemplate(chart, release, namespace, args);
    return {
      stderr: out.stderr,
      rules: renderedObjects(out.stdout).filter((d) => d.kind === 'PrometheusRule'),
    };
  };
  const groupsOf = (rule: RenderedObject | undefined) => (rule?.['spec'] as { groups: RuleGroup[] }).groups;
  const alertsOf = (groups: RuleGroup[]) => groups.flatMap((g) => g.rules);
  let rendering: RuleGroup[] | undefined;
  /** The rendered rules' groups, a fresh copy each call (tests change them). */
  const rendered = () => structuredClone((rendering ??= groupsOf(render(...enabled).rules[0])));

  // The unit-test files, with the names only a rendering knows put in.
  const testFiles = [
    join(repoRoot, 'charts', 'homeostat-operator-lib', 'promtool'),
    join(chartPaths(chart).dir, 'promtool'),
  ]
    .filter((dir) => existsSync(dir))
    .flatMap((dir) =>
      readdirSync(dir)
        .filter((f) => f.endsWith('.test.yaml'))
        .map((f) => join(dir, f)),
    );
  let prefix: string | undefined;
  const fill = (name: string): string => {
    switch (name) {
      case 'job':
        return job;
      case 'namespace':
        return namespace;
      case 'fullname':
        return fullname;
      case 'operator':
        return options.operator;
      default:
        // The shared alerts are named <prefix>Down and so on; the first one tells the prefix.
        prefix ??= alertsOf(rendered())[0]?.alert.replace(/Down$/, '') ?? '';
        return prefix;
    }
  };
  const filled = (file: string) =>
    readFileSync(file, 'utf8').replace(/\$\{(job|namespace|fullname|operator|prefix)\}/g, (_, name: string) =>
      fill(name),
    );

  const work = mkdtempSync(join(tmpdir(), `${chart.name}-rules-`));
  afterAll(() => rmSync(work, { recursive: true, force: true }));
  const promtool = (...args: string[]) => {
    const out = spawnSync(binaryPath('promtool'), args, { cwd: work, encoding: 'utf8' });
    return { status: out.status, output: out.stdout + out.stderr };
  };
  /** Writes `groups` as rules.yaml beside the filled unit tests; returns the tests' names. */
  const stage = (groups: RuleGroup[]) => {
    writeFileSync(join(work, 'rules.yaml'), stringify({ groups }));
    return testFiles.map((file, i) => {
      const name = `${i}-${file.split('/').pop() ?? ''}`;
      writeFileSync(join(work, name), filled(file));
      return name;
    });
  };
  /** promtool test rules on `groups`; with `only`, just the test groups that evaluate that alert. */
  const unitTests = (groups: RuleGroup[], only?: string) => {
    const files = stage(groups);
    if (!only) return promtool('test', 'rules', ...files);
    const names = testFiles
      .flatMap((f) => (parse(filled(f)) as UnitTests).tests)
      .filter((t) => t.alert_rule_test?.some((e) => e.alertname === only))
      .map((t) => t.name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
    return promtool('test', 'rules', `--run=^(${names.join('|')})$`, ...files);
  };

  describe(`${chart.name} chart: the PrometheusRule with the real helm and promtool`, () => {
    it('is absent unless asked for, needs the ServiceMonitor, and carries the labels Prometheus selects by', () => {
      expect(render().rules).toEqual([]);
      expect(render('--set', 'prometheus.prometheusRule.enabled=true').stderr).toContain(
        'prometheus.prometheusRule.enabled needs prometheus.serviceMonitor.enabled',
      );
      const labelled = render(...enabled, '--set', 'prometheus.prometheusRule.labels.release=kps');
      expect(labelled.stderr).toBe('');
      expect(labelled.rules).toHaveLength(1);
      expect((labelled.rules[0]?.metadata as { labels: Record<string, string> }).labels['release']).toBe(
        'kps',
      );
    });

    it('passes promtool check rules, which refuses a broken rule', () => {
      stage(rendered());
      const checked = promtool('check', 'rules', 'rules.yaml');
      expect(checked.output).toMatch(/SUCCESS: \d+ rules found/);
      expect(checked.status).toBe(0);
      const broken = rendered();
      const first = broken[0]?.rules[0];
      if (first) first.expr = `${first.expr} >`;
      stage(broken);
      expect(promtool('check', 'rules', 'rules.yaml').status).not.toBe(0);
    });

    it('gives every alert a severity, a summary and a description', () => {
      for (const rule of alertsOf(rendered())) {
        expect(['critical', 'warning'], rule.alert).toContain(rule.labels?.['severity']);
        expect(rule.annotations?.['summary'], rule.alert).toMatch(/\w/);
        expect(rule.annotations?.['description']?.length ?? 0, rule.alert).toBeGreaterThan(80);
      }
    });

    it('has unit tests that see every alert fire and not fire, and they pass', () => {
      const alerts = alertsOf(rendered()).map((r) => r.alert);
      const evals = testFiles.flatMap((f) =>
        (parse(filled(f)) as UnitTests).tests.flatMap((t) => t.alert_rule_test ?? []),
      );
      for (const alert of alerts) {
        const mine = evals.filter((e) => e.alertname === alert);
        expect(
          mine.some((e) => (e.exp_alerts ?? []).length > 0),
          `${alert} seen firing`,
        ).toBe(true);
        expect(
          mine.some((e) => (e.exp_alerts ?? []).length === 0),
          `${alert} seen not firing`,
        ).toBe(true);
      }
      expect(evals.map((e) => e.alertname).filter((a) => !alerts.includes(a))).toEqual([]);
      const result = unitTests(rendered());
      expect(result.output).toContain('SUCCESS');
      expect(result.status).toBe(0);
    });

    it('has unit tests that fail when an alert never fires, or fires without waiting its for', () => {
      for (const alert of alertsOf(rendered()).map((r) => r.alert)) {
        const silenced = rendered();
        for (const rule of alertsOf(silenced)) if (rule.alert === alert) rule.expr = 'vector(1) == 0';
        expect(unitTests(silenced, alert).status, `${alert} never firing`).not.toBe(0);
        const hasty = rendered();
        const rule = alertsOf(hasty).find((r) => r.alert === alert);
        if (!rule?.for) continue;
        delete rule.for;
        expect(unitTests(hasty, alert).status, `${alert} without for`).not.toBe(0);
      }
    });

    it(`reads only metrics the operator${options.operandMetrics ? ' or its operand' : ''} exports (and catches one neither does)`, async () => {
      const exported = new Set([
        ...(await exportedMetricNames(options.registry())),
        ...((await options.operandMetrics?.()) ?? []),
      ]);
      const unexported = (groups: RuleGroup[]) =>
        alertsOf(groups).flatMap((r) =>
          metricNamesIn(r.expr)
            .filter((name) => !exported.has(name) && !scrapeSeries.has(name))
            .map((name) => `${r.alert}: ${name}`),
        );
      expect(unexported(rendered())).toEqual([]);
      const misspelled = rendered();
      const last = alertsOf(misspelled).at(-1);
      if (last) last.expr = last.expr.replace(/([a-z_]+)\{/, '$1_typo{');
      expect(unexported(misspelled)).toHaveLength(1);
    });
  });
}
