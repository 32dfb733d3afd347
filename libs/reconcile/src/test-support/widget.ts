// A small custom kind for the library's own tests, declared the way operators declare theirs.
import { Type, type Static } from '@sinclair/typebox';
import { buildCrd } from '../crd/crd-builder.ts';
import { resourceType, type KubeObject } from '../client/resource-type.ts';
import { ConditionsSchema, type Condition } from '../helpers/conditions.ts';

export const WidgetSpec = Type.Object(
  {
    size: Type.Integer({ minimum: 0, maximum: 50, description: 'How many gizmos.' }),
    color: Type.Optional(Type.Union([Type.Literal('red'), Type.Literal('green'), Type.Literal('blue')])),
    labels: Type.Optional(Type.Record(Type.String(), Type.String())),
    zone: Type.Optional(
      Type.String({
        'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: 'zone is immutable' }],
      }),
    ),
  },
  {
    'x-kubernetes-validations': [
      {
        rule: "self.size <= 10 || self.color == 'blue'",
        message: 'only blue widgets may have more than 10 gizmos',
      },
    ],
  },
);

export const WidgetStatus = Type.Object({
  observedGeneration: Type.Optional(Type.Integer()),
  gizmos: Type.Optional(Type.Integer()),
  conditions: Type.Optional(ConditionsSchema),
});

export interface Widget extends KubeObject {
  spec: Static<typeof WidgetSpec>;
  status?: Omit<Static<typeof WidgetStatus>, 'conditions'> & { conditions?: Condition[] };
}

export const widgets = resourceType<Widget>('test.reconcile.homeostat.dev/v1', 'Widget', 'widgets');

export const widgetCrd = buildCrd({
  group: 'test.reconcile.homeostat.dev',
  kind: 'Widget',
  plural: 'widgets',
  shortNames: ['wdg'],
  categories: ['homeostat'],
  versions: [
    {
      name: 'v1',
      spec: WidgetSpec,
      status: WidgetStatus,
      scale: { specReplicasPath: '.spec.size', statusReplicasPath: '.status.gizmos' },
      printerColumns: [{ name: 'Size', type: 'integer', jsonPath: '.spec.size' }],
    },
  ],
});
