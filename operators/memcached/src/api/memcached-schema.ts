// The Memcached API, written once: the TypeScript types (memcached-types.ts) and the CRD YAML in
// the chart (npm run generate) are both derived from these schemas.
import { Type } from '@sinclair/typebox';
import { spreadSchema } from '@homeostat/operator-kit/api';
import {
  conditionsField,
  observedGenerationField,
  TolerationSchema,
  affinitySchema,
  imageSchema,
  labelSelectorSchema,
  requestsWithinLimitsRules,
  resourceRequirementsSchema,
} from '@homeostat/reconcile';

export const group = 'cache.homeostat.dev';
export const version = 'v1alpha1';

/** The port the metrics sidecar serves on (the widely used memcached exporter's). */
export const exporterPort = 9150;

/**
 * With spec.tls, the loopback-only plaintext listener the metrics sidecar reads statistics from
 * (memcached's `-l notls:127.0.0.1:<port>`; ADR 0403). Pods never expose it.
 */
export const loopbackStatsPort = 9151;

/** The most pods one Memcached may ask for: a bound that keeps a typo (1000) from a cluster-wide outage. */
export const maxSize = 64;

/** Clients the NetworkPolicy admits: pods a selector names, in namespaces a selector names. */
const NetworkPeer = Type.Object(
  {
    podSelector: Type.Optional(
      labelSelectorSchema(
        "Pods admitted (in the Memcached's namespace, or in the namespaces namespaceSelector names).",
      ),
    ),
    namespaceSelector: Type.Optional(
      labelSelectorSchema(
        'Namespaces whose pods (all, or those podSelector names) are admitted; {} is every namespace.',
      ),
    ),
  },
  {
    'x-kubernetes-validations': [
      {
        rule: 'has(self.podSelector) || has(self.namespaceSelector)',
        message:
          'each client needs a podSelector, a namespaceSelector or both: an empty entry would name no pod',
      },
    ],
  },
);

const NetworkPolicySpec = Type.Object(
  {
    clients: Type.Array(NetworkPeer, {
      maxItems: 16,
      description:
        'The pods admitted to the memcached port; every other pod is refused. podSelector {} admits every pod of the namespace.',
    }),
  },
  {
    'x-kubernetes-validations': [
      {
        rule: 'size(self.clients) > 0',
        message:
          'networkPolicy.clients must name at least one client: with none, no pod could reach the cache',
        fieldPath: '.clients',
      },
    ],
    description:
      "When set, a NetworkPolicy admits only these clients to the memcached port (the cluster's network plugin must enforce NetworkPolicies). Removing it removes the policy.",
  },
);

// A Secret's name is a DNS-1123 subdomain; refused here, a typo would only show as pods that never start.
const dns1123Subdomain = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$';

/** A Secret name field (`<field>.secretName`) refused at the API server unless it is a valid name. */
function secretNameField(field: string, description: string) {
  return Type.String({
    minLength: 1,
    maxLength: 253,
    description,
    'x-kubernetes-validations': [
      {
        rule: `self.matches('${dns1123Subdomain}')`,
        message: `${field}.secretName must be a Secret's name: lowercase letters, digits, '-' and '.', starting and ending with a letter or digit`,
      },
    ],
  });
}

const TlsSpec = Type.Object(
  {
    secretName: secretNameField(
      'tls',
      "kubernetes.io/tls Secret in the Memcached's namespace: tls.crt (the certificate chain, leaf first) and tls.key. Its certificate must name the addresses clients connect to (see the guide). A ca.crt in it is passed to memcached; client certificates are not verified.",
    ),
  },
  {
    description:
      "When set, memcached accepts only TLS connections on its port (memcached -Z). Changing or removing it restarts the pods, and so empties the cache. The metrics sidecar reads statistics over a plaintext listener on the pod's loopback only.",
  },
);

const SaslSpec = Type.Object(
  {
    secretName: secretNameField(
      'sasl',
      "Secret in the Memcached's namespace with the keys username and password: the one account clients authenticate as (SASL PLAIN). A trailing newline of the password is dropped.",
    ),
  },
  {
    description:
      'When set, memcached requires SASL authentication (memcached -S) and then speaks only the binary protocol: clients must use it and authenticate. Changing or removing it restarts the pods, and so empties the cache. Use it with tls: PLAIN sends the password as written.',
  },
);

export const MemcachedSpec = Type.Object(
  {
    size: Type.Integer({
      minimum: 0,
      maximum: maxSize,
      default: 1,
      description: `Number of memcached pods (0 to ${maxSize}). Changed by \`kubectl scale\` through the scale subresource.`,
    }),
    image: Type.Optional(
      imageSchema(
        "Memcached container image. Defaults to the operator's configured image (chart value memcachedImage).",
      ),
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
    spread: spreadSchema({
      pods: 'cache pods',
      defaultPolicy: 'Disabled',
      description:
        'A topology spread constraint over the pods, e.g. across zones (without spec.affinity the pods also prefer different nodes).',
    }),
    shutdown: Type.Object(
      {
        drainSeconds: Type.Integer({
          minimum: 0,
          maximum: 300,
          default: 5,
          description:
            'How long a stopping pod keeps serving after it left the Service (a preStop sleep) before memcached is stopped: clients that resolved it just before still get answers. 0: memcached stops at once.',
        }),
      },
      { default: {}, description: 'How a pod stops (rolling updates, scale-down, drains).' },
    ),
    networkPolicy: Type.Optional(NetworkPolicySpec),
    tls: Type.Optional(TlsSpec),
    sasl: Type.Optional(SaslSpec),
    exporter: Type.Object(
      {
        enabled: Type.Boolean({
          default: true,
          description: `A metrics sidecar in every pod: memcached's stats in Prometheus form on port ${exporterPort} (metrics), for a PodMonitor.`,
        }),
        image: Type.Optional(
          imageSchema(
            "The sidecar's image. Defaults to the operator's configured one (chart value memcachedExporterImage).",
          ),
        ),
      },
      { default: {}, description: 'Per-pod metrics.' },
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
      {
        rule: `!self.exporter.enabled || self.port != ${exporterPort}`,
        message: `port ${exporterPort} is the metrics sidecar's: choose another port, or set exporter.enabled to false`,
        fieldPath: '.port',
      },
      {
        rule: `!has(self.tls) || !self.exporter.enabled || self.port != ${loopbackStatsPort}`,
        message: `port ${loopbackStatsPort} is where the metrics sidecar reads statistics when tls is set: choose another port, or set exporter.enabled to false`,
        fieldPath: '.port',
      },
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
  servers: Type.Optional(
    Type.Array(Type.String(), {
      description:
        'Address of every server, <name>-<ordinal>.<name>.<namespace>.svc:<port>, in ordinal order: what a client keys its consistent-hashing ring by (also in the ConfigMap <name>-servers).',
    }),
  ),
  conditions: conditionsField('Available, Progressing and Degraded (KEP-1623 conditions).'),
});
