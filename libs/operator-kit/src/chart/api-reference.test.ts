// The API reference page as a reader sees it: every field with its facts, every rule's message.
import { Type } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import { buildCrd } from '@homeostat/reconcile';
import { apiReference, apiReferencePath } from './api-reference.ts';
import { widgetChart } from '../test-support/widget-chart.ts';

const crd = buildCrd({
  group: 'widgets.test',
  kind: 'Widget',
  plural: 'widgets',
  versions: [
    {
      name: 'v1',
      spec: Type.Object(
        {
          size: Type.Integer({ minimum: 1, maximum: 9, default: 3, description: 'How many widgets.' }),
          mode: Type.Union([Type.Literal('fast'), Type.Literal('safe')], { description: 'How they run.' }),
          labels: Type.Optional(Type.Record(Type.String(), Type.String({ maxLength: 63 }))),
          parts: Type.Optional(
            Type.Array(Type.Object({ name: Type.String({ minLength: 1 }) }), { maxItems: 4 }),
          ),
        },
        {
          'x-kubernetes-validations': [
            { rule: "self.mode != 'fast' || self.size <= 3", message: 'fast widgets come three at most' },
          ],
        },
      ),
      status: Type.Object({ ready: Type.Optional(Type.Integer({ description: 'Ready widgets.' })) }),
      printerColumns: [{ name: 'Size', type: 'integer', jsonPath: '.spec.size' }],
    },
  ],
});

describe('apiReference', () => {
  const page = apiReference(widgetChart, crd);

  it('lists each field with its type, default, bounds and description, nested ones by their full path', () => {
    expect(page).toContain('- `spec.size` (integer; default `3`; 1 to 9): How many widgets.');
    expect(page).toContain('- `spec.mode` (string, required; one of `fast`, `safe`): How they run.');
    expect(page).toContain('- `spec.labels` (map of string)');
    expect(page).toContain('- `spec.parts` (array of object; at most 4 items)');
    expect(page).toContain('- `spec.parts[].name` (string, required; at least 1 character)');
    expect(page).toContain('- `status.ready` (integer): Ready widgets.');
  });

  it('gives every CEL rule by its message, and the printer columns', () => {
    expect(page).toContain('- on `spec`: fast widgets come three at most');
    expect(page).toContain('- **Size** (`.spec.size`)');
  });

  it('lives under docs/reference by the CRD name', () => {
    expect(apiReferencePath(crd)).toBe('docs/reference/widgets.widgets.test.md');
  });
});
