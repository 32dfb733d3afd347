// The PostgreSQLBackup CustomResourceDefinition, built from the schema (the chart's CRD YAML is generated from it).
import { buildCrd } from '@homeostat/reconcile';
import { group, version } from './postgres-cluster-schema.ts';
import { PostgresBackupSpec, PostgresBackupStatus } from './postgres-backup-schema.ts';

export const postgresBackupCrd = buildCrd({
  group,
  kind: 'PostgreSQLBackup',
  plural: 'postgresqlbackups',
  singular: 'postgresqlbackup',
  shortNames: ['pgbackup'],
  categories: ['homeostat'],
  versions: [
    {
      name: version,
      spec: PostgresBackupSpec,
      status: PostgresBackupStatus,
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
        { name: 'Label', type: 'string', jsonPath: '.status.label', description: "pgBackRest's label" },
        { name: 'Size', type: 'integer', jsonPath: '.status.databaseBytes', description: 'Database bytes' },
        {
          name: 'Verified',
          type: 'string',
          jsonPath: '.status.verification.result',
          description: 'What the last restore drill of this backup found',
        },
        { name: 'Source', type: 'string', jsonPath: '.status.source', priority: 1 },
        { name: 'End LSN', type: 'string', jsonPath: '.status.endLsn', priority: 1 },
        { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
      ],
    },
  ],
});
