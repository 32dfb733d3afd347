// The Memcached API, written once: the TypeScript types (memcached-types.ts) and the CRD YAML in
// the chart (npm run generate) are both derived from these schemas.
import { Type } from '@sinclair/typebox';
import {
  conditionsField,
  observedGenerationField,
  TolerationSchema,
  affinitySchema,
  requestsWithinLimitsRules,
  resourceRequirementsSchema,
} from '@homeostat/reconcile';

export const group = 'cache.homeostat.dev';
export const version = 'v1alpha1';

/** The most pods one Memcached may ask for: a bound that keeps a typo (1000) from a cluster-wide outage. */
export const maxSize = 64;

export const MemcachedSpec = Type.Object(
  {
    size: Type.Integer({
      minimum: 0,
      maximum: maxSize,
      default: 1,
      description: `Number of memcached pods (0 to ${maxSize}). Changed by \`kubectl scale\` through the scale subresource.`,
    }),
    image: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 512,
        pattern: '^[^\\s]+$',
        description:
          "Memcached container image. Defaults to the operator's configured image (chart value memcachedImage).",
      }),
    ),
    port: Type.Integer({
      minimum: 1024,
      maximum: 65535,
      default: 11211,
      description:
        'TCP port memcached listens on and the Service exposes. At least 1024: the pods run without the capability to bind lower ports.',
    }),
    memoryLimitMB: Type.Integer({
      minimum: 16,
      maximum: 65536,
      default: 64,
      description:
        'Memory for items in megabytes (memcached -m). The container memory limit defaults to this plus 32Mi of headroom.',
    }),
    resources: Type.Optional(
      resourceRequirementsSchema(
        'CPU and memory requests and limits of the memcached container. Unset memory values are derived from memoryLimitMB.',
      ),
    ),
    nodeSelector: Type.Optional(
      Type.Record(Type.String(), Type.String(), { description: 'Node labels the pods must match.' }),
    ),
    tolerations: Type.Optional(
      Type.Array(TolerationSchema, { maxItems: 32, description: 'Tolerations of the memcached pods.' }),
    ),
    affinity: Type.Optional(
      affinitySchema(
        'Pod affinity rules (core/v1 Affinity), passed to the pods as written. Without it the operator prefers spreading pods across nodes.',
      ),
    ),
    podDisruptionBudget: Type.Optional(
      Type.Object(
        {
          enabled: Type.Boolean({
            default: true,
            description: 'Create a PodDisruptionBudget when size is greater than 1.',
          }),
          maxUnavailable: Type.Integer({
            minimum: 1,
            default: 1,
            description: 'Pods a voluntary disruption (node drain) may take down at once.',
          }),
        },
        { description: 'The PodDisruptionBudget that limits voluntary disruptions.' },
      ),
    ),
  },
  {
    'x-kubernetes-validations': [
      {
        rule: '!has(self.resources) || !has(self.resources.limits) || !has(self.resources.limits.memory) || quantity(self.resources.limits.memory).asApproximateFloat() > double(self.memoryLimitMB) * 1048576.0',
        message:
          'resources.limits.memory must be larger than memoryLimitMB: memcached needs memory beyond its item storage for connections and its hash table',
        fieldPath: '.resources.limits.memory',
      },
      ...requestsWithinLimitsRules(),
    ],
  },
);

export const MemcachedStatus = Type.Object({
  observedGeneration: observedGenerationField(),
  replicas: Type.Optional(
    Type.Integer({ description: 'Pods that exist (the scale subresource reads this).' }),
  ),
  readyReplicas: Type.Optional(Type.Integer({ description: 'Pods that are ready to serve.' })),
  nodes: Type.Optional(
    Type.Array(Type.String(), { description: 'Names of the ready memcached pods, sorted.' }),
  ),
  selector: Type.Optional(
    Type.String({ description: 'Label selector of the pods (the scale subresource reads this).' }),
  ),
  conditions: conditionsField('Available, Progressing and Degraded (KEP-1623 conditions).'),
});
