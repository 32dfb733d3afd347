import { describe, expect, it } from 'vitest';
import { Type } from '@sinclair/typebox';
import { buildCrd } from './crd-builder.ts';
import {
  quantitySchema,
  requestsWithinLimitsRules,
  resourceRequirementsSchema,
} from './kubernetes-schemas.ts';
import { widgetCrd } from '../test-support/widget.ts';

describe('buildCrd', () => {
  it('turns TypeBox unions of literals into enums and Records into additionalProperties', () => {
    const spec = (
      widgetCrd.spec['versions'] as {
        schema: { openAPIV3Schema: { properties: { spec: Record<string, unknown> } } };
      }[]
    )[0]?.schema.openAPIV3Schema.properties.spec;
    expect(spec).toMatchObject({
      type: 'object',
      required: ['size'],
      properties: {
        color: { type: 'string', enum: ['red', 'green', 'blue'] },
        labels: { type: 'object', additionalProperties: { type: 'string' } },
        zone: {
          type: 'string',
          'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: 'zone is immutable' }],
        },
      },
    });
    expect(JSON.stringify(widgetCrd)).not.toMatch(/anyOf|patternProperties|\$id/);
  });

  it('enables the status and scale subresources and names the CRD plural.group', () => {
    expect(widgetCrd.metadata.name).toBe('widgets.test.reconcile.homeostat.dev');
    const version = (widgetCrd.spec['versions'] as Record<string, unknown>[])[0];
    expect(version?.['subresources']).toEqual({
      status: {},
      scale: { specReplicasPath: '.spec.size', statusReplicasPath: '.status.gizmos' },
    });
  });

  it('does not require fields that have a default (the API server fills them in)', () => {
    const crd = buildCrd({
      group: 'x.dev',
      kind: 'Cache',
      plural: 'caches',
      versions: [
        {
          name: 'v1',
          spec: Type.Object({
            size: Type.Integer(),
            port: Type.Integer({ default: 11211 }),
            budget: Type.Object({ enabled: Type.Boolean({ default: true }) }, { default: {} }),
          }),
        },
      ],
    });
    const spec = (
      crd.spec['versions'] as {
        schema: { openAPIV3Schema: { properties: { spec: Record<string, unknown> } } };
      }[]
    )[0]?.schema.openAPIV3Schema.properties.spec;
    expect(spec?.['required']).toEqual(['size']);
    expect(spec).toMatchObject({
      properties: { budget: { default: {}, properties: { enabled: { default: true } } } },
    });
    expect((spec?.['properties'] as Record<string, Record<string, unknown>>)['budget']).not.toHaveProperty(
      'required',
    );
  });

  it('refuses a schema that is not structural, naming the path', () => {
    const build = () =>
      buildCrd({
        group: 'x.dev',
        kind: 'Bad',
        plural: 'bads',
        versions: [
          { name: 'v1', spec: Type.Object({ either: Type.Union([Type.String(), Type.Integer()]) }) },
        ],
      });
    expect(build).toThrow(/<root>\.spec\.either: anyOf is not supported/);
  });

  it('bounds metadata.name when asked, so a CEL rule on the name stays within the cost budget', () => {
    const crd = buildCrd({
      group: 'x.dev',
      kind: 'Named',
      plural: 'nameds',
      nameMaxLength: 50,
      versions: [{ name: 'v1', spec: Type.Object({}) }],
    });
    const root = (crd.spec['versions'] as { schema: { openAPIV3Schema: Record<string, unknown> } }[])[0]
      ?.schema.openAPIV3Schema;
    expect(root?.['properties']).toMatchObject({
      metadata: { type: 'object', properties: { name: { type: 'string', maxLength: 50 } } },
    });
  });

  it('gives core/v1 pieces with readable CEL messages: quantities, requests within limits', () => {
    expect(quantitySchema('Memory.')['x-kubernetes-validations']).toEqual([
      { rule: 'isQuantity(self)', message: 'must be a Kubernetes quantity such as 128Mi, 1Gi, 250m or 1' },
    ]);
    expect(resourceRequirementsSchema('Resources.').properties).toHaveProperty('limits');
    expect(requestsWithinLimitsRules('members').map((r) => [r.message, r.fieldPath])).toEqual([
      ['members.requests.memory must not be larger than members.limits.memory', '.members.requests.memory'],
      ['members.requests.cpu must not be larger than members.limits.cpu', '.members.requests.cpu'],
    ]);
  });
});
