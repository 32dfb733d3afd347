// The Memcached CustomResourceDefinition, built from the schema (the chart's CRD YAML is generated from it).
import { buildCrd, dnsLabelNameRule, specRequiredRule } from '@homeostat/reconcile';
import { group, MemcachedSpec, MemcachedStatus, version } from './memcached-schema.ts';

/** The Memcached CRD, as installed by the chart. */
export const memcachedCrd = buildCrd({
  group,
  kind: 'Memcached',
  plural: 'memcacheds',
  singular: 'memcached',
  shortNames: ['mc'],
  categories: ['homeostat'],
  // Keeps the name rule below within the API server's CEL cost budget, and leaves room for what the
  // StatefulSet derives from the name: its pods' controller-revision-hash label value is
  // <name>-<hash of up to 10 characters>, and a label value is at most 63 characters.
  nameMaxLength: 52,
  versions: [
    {
      name: version,
      spec: MemcachedSpec,
      status: MemcachedStatus,
      // The name becomes the Service's DNS name and a label value.
      validations: [specRequiredRule, dnsLabelNameRule('it names the Service')],
      scale: {
        specReplicasPath: '.spec.size',
        statusReplicasPath: '.status.replicas',
        labelSelectorPath: '.status.selector',
      },
      printerColumns: [
        { name: 'Size', type: 'integer', jsonPath: '.spec.size', description: 'Desired pods' },
        { name: 'Ready', type: 'integer', jsonPath: '.status.readyReplicas', description: 'Ready pods' },
        {
          name: 'Status',
          type: 'string',
          jsonPath: ".status.conditions[?(@.type=='Available')].reason",
          description: 'Why the Memcached is or is not available',
        },
        { name: 'Image', type: 'string', jsonPath: '.spec.image', priority: 1 },
        { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
      ],
    },
  ],
});
