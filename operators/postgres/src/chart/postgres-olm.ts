// The PostgreSQL operator's OLM listing: what a catalog shows and the fields a console offers.
// Its bundle and catalog package are generated from this and the chart (libs/operator-kit/src/olm).
import {
  conditionsField,
  field,
  resourcesField,
  phaseField,
  widget,
  type OlmListing,
} from '@homeostat/operator-kit/olm';
import { defaultPostgresImages } from '../config/default-images.ts';

export const postgresOlm: OlmListing = {
  displayName: 'Homeostat PostgreSQL',
  summary:
    'Runs PostgreSQL from a PostgreSQLCluster: streaming replicas, failover that fences first, backups and restores.',
  description: [
    'Creates and keeps a PostgreSQL cluster per `PostgreSQLCluster`: a primary and streaming',
    'replicas, Services for read-write, read-only and any instance, and generated credentials and',
    'TLS. When the primary fails, the operator fences it and promotes the most advanced replica;',
    'with `required` synchronous replication no acknowledged commit is lost. Planned switchovers,',
    'rolling restarts one instance at a time, WAL archiving and base backups to S3 with pgBackRest',
    '(`PostgreSQLBackup`, on a schedule with retention), point-in-time recovery into a new cluster,',
    'and restore drills that prove the backups.',
    '',
    'The PostgreSQL guide in the repository (docs/postgres) covers failover, synchronous',
    'replication, backups, security, operations and troubleshooting.',
  ].join('\n'),
  // Full Lifecycle: rolling restarts and switchovers carry image and operator upgrades (Seamless
  // Upgrades); backups, point-in-time recovery and automatic failover with fencing. Not Deep
  // Insights: the alerts and dashboard have not yet been seen working against a real Prometheus
  // (ADR 0013).
  capability: 'Full Lifecycle',
  categories: ['Database'],
  keywords: ['postgresql', 'postgres', 'database', 'failover', 'backup'],
  ownedKinds: [
    {
      kind: 'PostgreSQLCluster',
      displayName: 'PostgreSQL cluster',
      description:
        'A PostgreSQL primary with streaming replicas, automatic failover, switchover and backups.',
      specDescriptors: [
        field('instances', 'Instances', widget.podCount),
        field('postgresVersion', 'PostgreSQL version', widget.number),
        field('storage.size', 'Storage size'),
        resourcesField,
        field('primary', 'Primary (switchover)', widget.text, widget.advanced),
        field('backup', 'Backups', widget.advanced),
        field('superuserAccess', 'Superuser access', widget.booleanSwitch, widget.advanced),
      ],
      statusDescriptors: [
        phaseField,
        field('readyInstances', 'Ready instances'),
        field('currentPrimary', 'Primary'),
        field('timeline', 'Timeline'),
        field('failovers', 'Failovers'),
        conditionsField,
      ],
    },
    {
      kind: 'PostgreSQLBackup',
      displayName: 'PostgreSQL backup',
      description: 'One pgBackRest base backup of a PostgreSQLCluster, to its S3 bucket.',
      specDescriptors: [
        field('clusterName', 'Cluster'),
        field('target', 'Target', widget.text, widget.advanced),
      ],
      statusDescriptors: [
        phaseField,
        field('label', 'Label'),
        field('finishedAt', 'Finished'),
        field('storedBytes', 'Stored bytes'),
        conditionsField,
      ],
    },
  ],
  operandImages: Object.entries(defaultPostgresImages).map(([major, image]) => ({
    name: `postgresql-${major}`,
    image,
  })),
  samples: ['config/samples/postgresqlcluster.yaml', 'config/samples/postgresqlbackup.yaml'],
};
