// The PostgreSQLCluster CustomResourceDefinition, built from the schema (the chart's CRD YAML is
// generated from it).
import { buildCrd, dnsLabelNameRule, specRequiredRule } from '@homeostat/reconcile';
import {
  group,
  maxClusterNameLength,
  PostgresClusterSpec,
  PostgresClusterStatus,
  version,
} from './postgres-cluster-schema.ts';

export const postgresClusterCrd = buildCrd({
  group,
  kind: 'PostgreSQLCluster',
  plural: 'postgresqlclusters',
  singular: 'postgresqlcluster',
  shortNames: ['pgc', 'pgcluster'],
  categories: ['homeostat'],
  // Bounds metadata.name: the name rules below stay within the CEL cost budget, and instance,
  // Service and Secret names built from it stay DNS labels.
  nameMaxLength: maxClusterNameLength,
  versions: [
    {
      name: version,
      spec: PostgresClusterSpec,
      status: PostgresClusterStatus,
      validations: [
        specRequiredRule,
        dnsLabelNameRule('it names Services and pods'),
        {
          // Archiving into the repository being recovered from would mix two clusters' WAL under
          // one stanza: the source's own history could no longer be restored.
          rule: "!has(self.spec.bootstrap) || !has(self.spec.bootstrap.recovery) || !has(self.spec.backup) || self.spec.bootstrap.recovery.source.clusterName != self.metadata.name || self.spec.backup.destination.s3.bucket != self.spec.bootstrap.recovery.source.destination.s3.bucket || (has(self.spec.backup.destination.s3.prefix) ? self.spec.backup.destination.s3.prefix : '') != (has(self.spec.bootstrap.recovery.source.destination.s3.prefix) ? self.spec.bootstrap.recovery.source.destination.s3.prefix : '')",
          message:
            'spec.backup.destination is the repository spec.bootstrap.recovery reads from, under the same cluster name: the recovered cluster would archive into its source. Give spec.backup.destination another prefix (or bucket)',
          fieldPath: '.spec.backup.destination',
        },
        {
          rule: "!has(self.spec.primary) || (self.spec.primary.startsWith(self.metadata.name + '-') && self.spec.primary.substring(size(self.metadata.name) + 1).matches('^[0-9]$') && int(self.spec.primary.substring(size(self.metadata.name) + 1)) < self.spec.instances)",
          message:
            "spec.primary must name one of this cluster's instances: the cluster's name, '-' and a number below instances (mycluster-0 to mycluster-2 for 3 instances)",
          fieldPath: '.spec.primary',
        },
      ],
      scale: {
        specReplicasPath: '.spec.instances',
        statusReplicasPath: '.status.instances',
        labelSelectorPath: '.status.selector',
      },
      printerColumns: [
        { name: 'Instances', type: 'integer', jsonPath: '.spec.instances', description: 'Desired instances' },
        {
          name: 'Ready',
          type: 'integer',
          jsonPath: '.status.readyInstances',
          description: 'Ready instances',
        },
        {
          name: 'Primary',
          type: 'string',
          jsonPath: '.status.currentPrimary',
          description: 'The instance taking writes',
        },
        { name: 'Phase', type: 'string', jsonPath: '.status.phase', description: 'Where the cluster is' },
        { name: 'Version', type: 'integer', jsonPath: '.spec.postgresVersion', priority: 1 },
        { name: 'Timeline', type: 'integer', jsonPath: '.status.timeline', priority: 1 },
        { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
      ],
    },
  ],
});
