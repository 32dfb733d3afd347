// A made-up operator's chart (one CRD, one value of its own), for the kit's chart tests.
import { Type } from '@sinclair/typebox';
import { buildCrd } from '@homeostat/reconcile';
import type { OperatorChart } from '../chart/operator-chart.ts';

export const widgetChart: OperatorChart = {
  name: 'widget-operator',
  workspace: 'operators/widget',
  crds: [
    buildCrd({
      group: 'widgets.test',
      kind: 'Widget',
      plural: 'widgets',
      versions: [{ name: 'v1', spec: Type.Object({ size: Type.Integer() }) }],
    }),
  ],
  values: {
    widgetImage: Type.String({
      description: 'Image of Widgets that name none.',
      default: 'example.test/widget:1',
    }),
  },
};
