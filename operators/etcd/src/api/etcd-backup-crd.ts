// The EtcdBackup CustomResourceDefinition, built from the schema (the chart's CRD YAML is generated from it).
import { buildCrd } from '@homeostat/reconcile';
import { group, version } from './api-group.ts';
import { EtcdBackupSpec, EtcdBackupStatus } from './etcd-backup-schema.ts';

/** The EtcdBackup CRD, as installed by the chart. */
export const etcdBackupCrd = buildCrd({
  group,
  kind: 'EtcdBackup',
  plural: 'etcdbackups',
  singular: 'etcdbackup',
  shortNames: ['etcdbk'],
  categories: ['homeostat'],
  versions: [
    {
      name: version,
      spec: EtcdBackupSpec,
      status: EtcdBackupStatus,
      validations: [
        {
          rule: 'has(self.spec)',
          message: 'spec is required: at least clusterName',
          fieldPath: '.spec',
          reason: 'FieldValueRequired',
        },
      ],
      printerColumns: [
        { name: 'Cluster', type: 'string', jsonPath: '.spec.clusterName' },
        { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
        { name: 'Size', type: 'integer', jsonPath: '.status.sizeBytes', description: 'Bytes' },
        { name: 'Revision', type: 'string', jsonPath: '.status.revision' },
        {
          name: 'Verified',
          type: 'string',
          jsonPath: '.status.verification.result',
          description: 'What the last restore drill of this backup found',
        },
        { name: 'Location', type: 'string', jsonPath: '.status.location', priority: 1 },
        { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
      ],
    },
  ],
});
