// What OLM installs for an operator, read from what its chart renders with default values: the
// Deployment, the RBAC rules and the metrics Service. Reading the rendering (rather than restating
// it) keeps the bundle and the chart one install: a change to either template shows up in the
// bundle, and the stale-file test asks for `npm run generate`.
import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import type { OperatorChart } from '../chart/operator-chart.ts';
import { helmTemplate, renderedObjects } from '../testing/helm-chart.ts';

const policyRule = Type.Object({
  apiGroups: Type.Array(Type.String()),
  resources: Type.Array(Type.String()),
  verbs: Type.Array(Type.String()),
  resourceNames: Type.Optional(Type.Array(Type.String())),
});
export type PolicyRule = Static<typeof policyRule>;

const named = Type.Object({
  name: Type.String(),
  labels: Type.Optional(Type.Record(Type.String(), Type.String())),
});
const role = Type.Object({
  kind: Type.Union([Type.Literal('Role'), Type.Literal('ClusterRole')]),
  rules: Type.Array(policyRule),
});
const envVar = Type.Object({ name: Type.String() }, { additionalProperties: true });
const container = Type.Object(
  { name: Type.String(), image: Type.String(), env: Type.Array(envVar) },
  { additionalProperties: true },
);
const deployment = Type.Object({
  kind: Type.Literal('Deployment'),
  metadata: named,
  spec: Type.Object(
    {
      template: Type.Object(
        {
          metadata: Type.Object(
            { labels: Type.Record(Type.String(), Type.String()) },
            { additionalProperties: true },
          ),
          spec: Type.Object(
            { serviceAccountName: Type.String(), containers: Type.Array(container) },
            { additionalProperties: true },
          ),
        },
        { additionalProperties: true },
      ),
    },
    { additionalProperties: true },
  ),
});
export type OperatorDeployment = Static<typeof deployment>;

const service = Type.Object(
  {
    kind: Type.Literal('Service'),
    metadata: Type.Object(
      {
        name: Type.String(),
        namespace: Type.Optional(Type.String()),
        labels: Type.Optional(Type.Record(Type.String(), Type.String())),
      },
      { additionalProperties: true },
    ),
  },
  { additionalProperties: true },
);
export type RenderedService = Static<typeof service>;

/** The operator's install as OLM takes it: one Deployment, its ServiceAccount's rules, extra objects. */
export interface ChartInstall {
  deployment: OperatorDeployment;
  serviceAccountName: string;
  /** Every rule the chart grants the ServiceAccount: what it manages, then its leader-election Lease. */
  rules: PolicyRule[];
  /** Objects a bundle carries besides the CSV and CRDs (the metrics Service). */
  services: RenderedService[];
  /** The operator's own image, as the Deployment runs it. */
  operatorImage: string;
}

// OLM makes the ServiceAccount and binds the CSV's rules to it itself.
const kindsOlmCreates = new Set(['ServiceAccount', 'ClusterRoleBinding', 'RoleBinding']);

/**
 * Renders `chart` with default values (CRDs aside: the bundle carries them) and reads its install.
 * The release is named like the chart, so objects and the leader-election Lease are named as in a
 * Helm install of release "<chart name>".
 */
export function chartInstall(chart: OperatorChart): ChartInstall {
  // Test hooks (helm test) are Helm's own; OLM has no place for them.
  const rendered = helmTemplate(chart, chart.name, 'operators', [
    '--set',
    'crds.enabled=false',
    '--skip-tests',
  ]);
  if (rendered.status !== 0) throw new Error(`helm template ${chart.name} failed:\n${rendered.stderr}`);
  const rules: PolicyRule[] = [];
  const services: RenderedService[] = [];
  let operatorDeployment: OperatorDeployment | undefined;
  for (const object of renderedObjects(rendered.stdout)) {
    if (Value.Check(deployment, object)) {
      if (operatorDeployment)
        throw new Error(`${chart.name} renders two Deployments; a bundle installs one operator`);
      operatorDeployment = object;
    } else if (Value.Check(role, object)) {
      rules.push(...object.rules);
    } else if (Value.Check(service, object)) {
      services.push(object);
    } else if (!kindsOlmCreates.has(object.kind ?? '')) {
      // A new kind in the chart needs a decision: carried in the bundle, or made by OLM.
      throw new Error(
        `${chart.name} renders a ${object.kind ?? 'kindless object'} the OLM bundle does not place`,
      );
    }
  }
  if (!operatorDeployment) throw new Error(`${chart.name} renders no Deployment`);
  const operator = operatorDeployment.spec.template.spec.containers.find((c) => c.name === 'operator');
  if (!operator) throw new Error(`${chart.name}'s Deployment has no container named operator`);
  return {
    deployment: operatorDeployment,
    serviceAccountName: operatorDeployment.spec.template.spec.serviceAccountName,
    rules,
    services,
    operatorImage: operator.image,
  };
}
