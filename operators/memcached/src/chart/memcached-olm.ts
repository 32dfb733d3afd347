// The Memcached operator's OLM listing: what a catalog shows and the fields a console offers.
// Its bundle and catalog package are generated from this and the chart (libs/operator-kit/src/olm).
import { conditionsField, field, resourcesField, widget, type OlmListing } from '@homeostat/operator-kit/olm';
import { defaultMemcachedExporterImage, defaultMemcachedImage } from '../config/default-image.ts';

export const memcachedOlm: OlmListing = {
  displayName: 'Homeostat Memcached',
  summary:
    'Runs Memcached from a Memcached custom resource: pods with stable names, a published server list and a disruption budget.',
  description: [
    'Creates and keeps a Memcached deployment per `Memcached` resource: pods with stable names',
    '(`<name>-0`, `<name>-1`, …) from a StatefulSet, a headless Service that gives each a DNS name, the',
    'ordered server list in `status.servers` and in the ConfigMap `<name>-servers` for consistent-hashing',
    'clients, and a PodDisruptionBudget. `spec.size` scales it at the highest ordinal (also with',
    '`kubectl scale` or a HorizontalPodAutoscaler); changing the image or the memory rolls the pods one at',
    'a time. The status says, in Available, Progressing and Degraded conditions, what the operator is',
    'waiting for.',
    '',
    'The Memcached guide in the repository (docs/memcached) covers configuration, operations and',
    'troubleshooting.',
  ].join('\n'),
  // Seamless Upgrades: a new operator version takes over the same StatefulSets (and moves a Memcached
  // off an older version's Deployment once its StatefulSet serves, ADR 0404), and an image change
  // rolls the pods without downtime beyond the disruption budget. Nothing further: Memcached keeps
  // no data worth a backup, and there is no operand metrics exporter for Deep Insights (ADR 0013).
  capability: 'Seamless Upgrades',
  categories: ['Database'],
  keywords: ['memcached', 'cache', 'key-value'],
  ownedKinds: [
    {
      kind: 'Memcached',
      displayName: 'Memcached',
      description:
        'A Memcached deployment with a size, an image, memory, scheduling and a PodDisruptionBudget.',
      specDescriptors: [
        field('size', 'Size', widget.podCount),
        field('memoryLimitMB', 'Memory (MB)', widget.number),
        field('image', 'Image', widget.text, widget.advanced),
        field('port', 'Port', widget.number, widget.advanced),
        resourcesField,
        field('nodeSelector', 'Node selector', widget.nodeSelector, widget.advanced),
      ],
      statusDescriptors: [
        field('readyReplicas', 'Ready pods'),
        field('nodes', 'Pods'),
        field('servers', 'Servers'),
        conditionsField,
      ],
    },
  ],
  operandImages: [
    { name: 'memcached', image: defaultMemcachedImage },
    { name: 'memcached-exporter', image: defaultMemcachedExporterImage },
  ],
  samples: ['config/samples/memcached.yaml'],
};
