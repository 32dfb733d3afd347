// The test every chart's opt-in operand ServiceMonitor passes (the library's
// homeostat-operator.operandServiceMonitor template), rendered by the real helm: it selects the
// Services the operator builds for its operands (compared with the objects the controller builds,
// so the two cannot drift apart) on their metrics port, in the watched namespaces, and is absent
// unless asked for.
import type { V1Service } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { OperatorChart } from '../chart/operator-chart.ts';
import { helmTemplate, renderedObjects, type RenderedObject } from './helm-chart.ts';

export interface OperandServiceMonitorOptions {
  readonly chart: OperatorChart;
  /** The values key that enables it, e.g. `membersServiceMonitor`. */
  readonly valuesKey: string;
  /** The suffix of its name after the release's full name, e.g. `members`. */
  readonly nameSuffix: string;
  /** What it scrapes, for the test names: "every etcd member". */
  readonly what: string;
  /** A Service the operator builds that must be scraped (it has the metrics port). */
  readonly scraped: () => V1Service;
  /** A Service the operator builds that matches the selector but must not be scraped (no metrics port). */
  readonly notScraped: () => V1Service;
}

interface Monitor {
  metadata: { name: string; labels: Record<string, string> };
  spec: {
    selector: { matchLabels: Record<string, string> };
    namespaceSelector: { any?: boolean; matchNames?: string[] };
    endpoints: { port: string; path: string; interval: string }[];
  };
}

const isMonitor =
  (suffix: string) =>
  (d: RenderedObject): d is RenderedObject & Monitor =>
    d.kind === 'ServiceMonitor' && d.metadata?.name?.endsWith(`-${suffix}`) === true;

const matches = (selector: Record<string, string>, labels: Record<string, string> | undefined) =>
  Object.entries(selector).every(([k, v]) => labels?.[k] === v);

export function describeOperandServiceMonitor(options: OperandServiceMonitorOptions): void {
  const { chart, valuesKey, nameSuffix } = options;
  const render = (...args: string[]): Monitor[] => {
    const out = helmTemplate(chart, chart.name, `${chart.name}-system`, args);
    expect(out.stderr).toBe('');
    return renderedObjects(out.stdout).filter(isMonitor(nameSuffix));
  };

  describe(`${chart.name} chart: the ServiceMonitor for ${options.what}`, () => {
    it(`is absent unless ${valuesKey}.enabled`, () => {
      expect(render()).toEqual([]);
    });

    it('scrapes the metrics port of the operand Services, in every namespace or the watched ones', () => {
      const [monitor, ...others] = render(
        '--set',
        `${valuesKey}.enabled=true`,
        '--set',
        `${valuesKey}.labels.release=kps`,
      );
      expect(others).toEqual([]);
      const scraped = options.scraped();
      expect(matches(monitor?.spec.selector.matchLabels ?? {}, scraped.metadata?.labels)).toBe(true);
      expect(scraped.spec?.ports?.map((p) => p.name)).toContain(monitor?.spec.endpoints[0]?.port);
      // Matching the selector is not enough: without a metrics port a Service is not scraped.
      const other = options.notScraped();
      expect(matches(monitor?.spec.selector.matchLabels ?? {}, other.metadata?.labels)).toBe(true);
      expect(other.spec?.ports?.map((p) => p.name)).not.toContain('metrics');
      expect(monitor?.spec.endpoints[0]).toMatchObject({
        port: 'metrics',
        path: '/metrics',
        interval: '30s',
      });
      expect(monitor?.spec.namespaceSelector).toEqual({ any: true });
      expect(monitor?.metadata.labels['release']).toBe('kps');
      const [scoped] = render('--set', `${valuesKey}.enabled=true`, '--set-json', 'watchNamespaces=["shop"]');
      expect(scoped?.spec.namespaceSelector).toEqual({ matchNames: ['shop'] });
    });
  });
}
