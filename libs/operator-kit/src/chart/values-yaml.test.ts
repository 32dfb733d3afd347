import { Type } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import { parse, parseDocument } from 'yaml';
import { widgetChart } from '../test-support/widget-chart.ts';
import { closed, kubeObject, valuesSchema } from './values-schema.ts';
import { defaultsOf, valuesYaml } from './values-yaml.ts';

describe('values.yaml from the values schema', () => {
  const schema = closed(
    {
      name: Type.String({ description: 'A name.', default: '' }),
      nested: closed({ on: Type.Boolean({ description: 'Switch.', default: true }) }, 'A group.'),
      passThrough: kubeObject('A Kubernetes object.', { runAsNonRoot: true }),
      noDefault: Type.String({ description: 'Only in the schema.' }),
      emptyGroup: closed({ anything: Type.Object({}, { additionalProperties: true }) }, 'Nothing to show.'),
    },
    'Values.',
  );

  it('holds every default in schema order, objects written key by key, keys without one left out', () => {
    expect(defaultsOf(schema)).toEqual({
      name: '',
      nested: { on: true },
      passThrough: { runAsNonRoot: true },
    });
    expect(Object.keys(parse(valuesYaml(schema, 'header')) as object)).toEqual([
      'name',
      'nested',
      'passThrough',
    ]);
  });

  it('puts each description above its key, nested ones indented, the header on top', () => {
    const text = valuesYaml(schema, 'Values of a chart.\nSecond line.');
    expect(text).toMatch(/^# Values of a chart\.\n# Second line\.\n/);
    expect(text).toContain('# -- A name.\nname: ""');
    expect(text).toContain('# -- A group.\nnested:\n  # -- Switch.\n  on: true');
    expect(parseDocument(text).errors).toEqual([]);
  });

  it('wraps long descriptions under 100 columns', () => {
    const long = closed({ key: Type.String({ description: 'word '.repeat(60).trim(), default: '' }) }, '');
    const lines = valuesYaml(long, 'h').split('\n');
    expect(lines.filter((l) => l.startsWith('#')).every((l) => l.length <= 100)).toBe(true);
    expect(lines.filter((l) => l.startsWith('# -- ')).length).toBe(1);
  });

  it("places an operator's own values after imagePullSecrets and names its CRDs in the descriptions", () => {
    const values = valuesSchema(widgetChart);
    const keys = Object.keys(values.properties);
    expect(keys.slice(keys.indexOf('imagePullSecrets'), keys.indexOf('imagePullSecrets') + 3)).toEqual([
      'imagePullSecrets',
      'widgetImage',
      'replicaCount',
    ]);
    const defaults = defaultsOf(values) as Record<string, unknown>;
    expect(defaults['image']).toEqual({
      repository: 'ghcr.io/homeostat/widget-operator',
      tag: '',
      digest: '',
      pullPolicy: 'IfNotPresent',
    });
    expect(defaults).not.toHaveProperty('homeostat-operator-lib');
    expect(JSON.stringify(values.properties['crds'])).toContain('Install and upgrade the Widget CRD');
    expect(values.properties['maxConcurrentReconciles']?.description).toMatch(/^Widgets reconciled at once/);
  });
});
