// The chart's values.schema.json, written in TypeBox like the CRD. Objects refuse unknown keys, so
// a typo in a values file fails `helm install` instead of being silently ignored.
import { Type, type TSchema } from '@sinclair/typebox';

const closed = <T extends Parameters<typeof Type.Object>[0]>(properties: T, description: string) =>
  Type.Object(properties, { additionalProperties: false, description });

// Free-form Kubernetes objects (securityContext, affinity, ...) the chart passes through verbatim.
const kubeObject = (description: string) => Type.Object({}, { additionalProperties: true, description });
const stringMap = (description: string) => Type.Record(Type.String(), Type.String(), { description });

export const valuesSchema: TSchema = Type.Object(
  {
    nameOverride: Type.String({ description: 'Replaces the chart name in object names.' }),
    fullnameOverride: Type.String({ description: 'Replaces the whole release-and-chart name.' }),
    image: closed(
      {
        repository: Type.String({ minLength: 1, description: 'Operator image repository.' }),
        tag: Type.String({ description: "Operator image tag; empty means the chart's appVersion." }),
        digest: Type.String({
          pattern: '^(sha256:[a-f0-9]{64})?$',
          description: 'Pins the image by digest (sha256:...); wins over tag.',
        }),
        pullPolicy: Type.Union([Type.Literal('Always'), Type.Literal('IfNotPresent'), Type.Literal('Never')]),
      },
      'The operator image.',
    ),
    imagePullSecrets: Type.Array(Type.Object({ name: Type.String() }), {
      description: 'Secrets for pulling the operator image.',
    }),
    memcachedImage: Type.String({
      minLength: 1,
      description: 'Image of Memcacheds that set no spec.image (passed as MEMCACHED_IMAGE).',
    }),
    replicaCount: Type.Integer({
      minimum: 1,
      maximum: 10,
      description:
        'Operator replicas. More than 1 needs leaderElection.enabled: one leads, the others stand by.',
    }),
    leaderElection: closed(
      { enabled: Type.Boolean({ description: 'Lease-based leader election.' }) },
      'Leader election among operator replicas.',
    ),
    watchNamespaces: Type.Array(Type.String({ minLength: 1, maxLength: 63 }), {
      uniqueItems: true,
      description:
        'Namespaces to watch. Empty: all namespaces, with a ClusterRole. Otherwise a Role per listed namespace.',
    }),
    crds: closed(
      {
        enabled: Type.Boolean({ description: 'Install and upgrade the Memcached CRD with the chart.' }),
        keep: Type.Boolean({
          description: 'Keep the CRD (and so every Memcached) when the release is uninstalled.',
        }),
      },
      'The Memcached CustomResourceDefinition.',
    ),
    rbac: closed(
      { create: Type.Boolean({ description: 'Create the (Cluster)Roles and bindings.' }) },
      'RBAC.',
    ),
    serviceAccount: closed(
      {
        create: Type.Boolean({ description: 'Create the ServiceAccount.' }),
        name: Type.String({ description: 'Its name; empty means the release fullname.' }),
        annotations: stringMap('Annotations on the ServiceAccount.'),
      },
      'The ServiceAccount the operator runs as.',
    ),
    logLevel: Type.Union(
      ['fatal', 'error', 'warn', 'info', 'debug', 'trace'].map((l) => Type.Literal(l)),
      { description: 'Log level (JSON lines on stdout).' },
    ),
    maxConcurrentReconciles: Type.Integer({
      minimum: 1,
      maximum: 32,
      description: 'Memcacheds reconciled at once.',
    }),
    resources: kubeObject('Requests and limits of the operator container.'),
    podSecurityContext: kubeObject('Pod securityContext; the default passes Pod Security "restricted".'),
    securityContext: kubeObject('Container securityContext; the default passes Pod Security "restricted".'),
    podAnnotations: stringMap('Annotations on the operator pods.'),
    podLabels: stringMap('Extra labels on the operator pods.'),
    nodeSelector: stringMap('Node labels the operator pods must match.'),
    tolerations: Type.Array(kubeObject('A toleration.'), {
      description: 'Tolerations of the operator pods.',
    }),
    affinity: kubeObject('Affinity of the operator pods.'),
    priorityClassName: Type.String({ description: 'PriorityClass of the operator pods.' }),
    metrics: closed(
      {
        service: closed(
          {
            enabled: Type.Boolean({ description: 'Create the metrics Service.' }),
            port: Type.Integer({ minimum: 1, maximum: 65535, description: 'Port of the metrics Service.' }),
          },
          'The Service in front of /metrics.',
        ),
      },
      'Prometheus metrics (controller_runtime_*, workqueue_*) on port 8080.',
    ),
    prometheus: closed(
      {
        serviceMonitor: closed(
          {
            enabled: Type.Boolean({
              description: 'Create a ServiceMonitor (needs the Prometheus Operator CRDs).',
            }),
            interval: Type.String({ pattern: '^[0-9]+(ms|s|m|h)$', description: 'Scrape interval.' }),
            labels: stringMap('Labels your Prometheus selects ServiceMonitors by.'),
          },
          'Prometheus Operator ServiceMonitor for the metrics Service.',
        ),
      },
      'Prometheus Operator integration.',
    ),
  },
  { additionalProperties: false, description: 'Values of the memcached-operator chart.' },
);

/** values.schema.json as committed in the chart. */
export function valuesSchemaJson(): string {
  const schema = {
    $schema: 'http://json-schema.org/draft-07/schema#',
    ...JSON.parse(JSON.stringify(valuesSchema)),
  };
  return `${JSON.stringify(schema, null, 2)}\n`;
}
