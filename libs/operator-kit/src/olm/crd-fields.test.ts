import { describe, expect, it } from 'vitest';
import { widgetChart } from '../test-support/widget-chart.ts';
import { fieldDescription, storageVersion } from './crd-fields.ts';

const [widgetCrd] = widgetChart.crds;

describe('CRD fields for OLM descriptors', () => {
  it('reads the storage version', () => {
    if (!widgetCrd) throw new Error('the widget chart has a CRD');
    expect(storageVersion(widgetCrd)).toBe('v1');
  });

  it('throws on a descriptor path the schema does not have, so a renamed field fails generation', () => {
    if (!widgetCrd) throw new Error('the widget chart has a CRD');
    expect(fieldDescription(widgetCrd, 'spec', 'size')).toBe('');
    expect(() => fieldDescription(widgetCrd, 'spec', 'replicas')).toThrow('has no field spec.replicas');
  });
});
