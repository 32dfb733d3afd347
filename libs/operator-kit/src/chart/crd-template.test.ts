// The CRD template as Helm reads it: with YAML 1.1 rules, where off/on/yes/no are booleans.
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import type { CustomResourceDefinition } from '@homeostat/reconcile';
import { crdTemplate } from './crd-template.ts';
import type { OperatorChart } from './operator-chart.ts';

describe('crdTemplate', () => {
  it('quotes string values that YAML 1.1 would read as booleans (an enum of off, a default of on)', () => {
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'things.example.dev' },
      spec: { mode: { type: 'string', default: 'off', enum: ['off', 'on', 'yes', 'no', 'preferred'] } },
    } as unknown as CustomResourceDefinition;
    const template = crdTemplate({ workspace: 'operators/example' } as OperatorChart, crd);
    // The Helm directives are not YAML; what is between them is what Helm's YAML 1.1 parser reads.
    const body = template
      .split('\n')
      .filter((line) => !line.includes('{{'))
      .join('\n');
    const parsed = parse(body, { version: '1.1' }) as {
      spec: { mode: { default: unknown; enum: unknown[] } };
    };
    expect(parsed.spec.mode.default).toBe('off');
    expect(parsed.spec.mode.enum).toEqual(['off', 'on', 'yes', 'no', 'preferred']);
  });
});
