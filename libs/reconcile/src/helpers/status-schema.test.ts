import { Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { describe, expect, it } from 'vitest';
import { conditionsField, observedGenerationField, phaseField } from './status-schema.ts';

const Status = Type.Object({
  observedGeneration: observedGenerationField(),
  phase: phaseField(['Pending', 'Ready'], 'One word; the conditions say why.'),
  conditions: conditionsField('Ready (KEP-1623).'),
});

describe('status schema fields', () => {
  it('declares conditions as a list keyed by type, as the API server merges them', () => {
    const conditions = Status.properties.conditions;
    expect(conditions['x-kubernetes-list-type']).toBe('map');
    expect(conditions['x-kubernetes-list-map-keys']).toEqual(['type']);
    expect(conditions.description).toBe('Ready (KEP-1623).');
  });

  it('accepts the listed phases only', () => {
    expect(Value.Check(Status, { phase: 'Ready' })).toBe(true);
    expect(Value.Check(Status, { phase: 'Done' })).toBe(false);
  });

  it('takes the generation as an integer', () => {
    expect(Value.Check(Status, { observedGeneration: 2 })).toBe(true);
    expect(Value.Check(Status, { observedGeneration: 'two' })).toBe(false);
  });
});
