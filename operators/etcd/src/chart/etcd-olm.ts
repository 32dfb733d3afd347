// The etcd operator's OLM listing: what a catalog shows and the fields a console offers.
// Its bundle and catalog package are generated from this and the chart (libs/operator-kit/src/olm).
import {
  conditionsField,
  field,
  resourcesField,
  phaseField,
  widget,
  type OlmListing,
} from '@homeostat/operator-kit/olm';
import { etcdReleases } from '../api/etcd-versions.ts';

export const etcdOlm: OlmListing = {
  displayName: 'Homeostat etcd',
  summary:
    'Runs etcd clusters from an EtcdCluster: members changed one at a time, TLS, verified backups and restores.',
  description: [
    'Creates and keeps an etcd cluster per `EtcdCluster`: members as pods with their own volumes,',
    'added as learners and promoted once caught up, removed and replaced one at a time; TLS between',
    'members and for clients with a CA the operator generates; rolling upgrades between the etcd',
    'versions it ships. `EtcdBackup` takes a verified snapshot to S3 or a volume, on demand or on a',
    'schedule with retention; a new cluster can start from one, and restore drills prove them. When',
    'a majority of members is lost, the cluster can be recovered from its newest backup.',
    '',
    'The etcd guide in the repository (docs/etcd) covers membership, backups, restores, upgrades,',
    'operations and troubleshooting.',
  ].join('\n'),
  // Full Lifecycle: rolling upgrades (Seamless Upgrades), backups with retention, restores into a
  // new cluster, member replacement and quorum-loss recovery. Not Deep Insights: the alerts and
  // dashboard have not yet been seen working against a real Prometheus (ADR 0013).
  capability: 'Full Lifecycle',
  categories: ['Database'],
  keywords: ['etcd', 'key-value', 'database', 'backup'],
  ownedKinds: [
    {
      kind: 'EtcdCluster',
      displayName: 'etcd cluster',
      description: 'An etcd cluster of 1, 3, 5 or 7 members with storage, scheduling, TLS and backups.',
      specDescriptors: [
        field('size', 'Members', widget.podCount),
        field('version', 'etcd version'),
        field('storage.size', 'Storage size'),
        resourcesField,
        field('backup', 'Backups', widget.advanced),
        field('paused', 'Paused', widget.booleanSwitch, widget.advanced),
      ],
      statusDescriptors: [
        phaseField,
        field('readyMembers', 'Ready members'),
        field('leader', 'Leader'),
        field('currentVersion', 'Version'),
        field('clientEndpoint', 'Client endpoint'),
        field('clientSecret', 'Client certificate Secret', widget.secret),
        field('lastSuccessfulBackupTime', 'Last backup'),
        conditionsField,
      ],
    },
    {
      kind: 'EtcdBackup',
      displayName: 'etcd backup',
      description: 'One verified snapshot of an EtcdCluster, to S3 or a PersistentVolumeClaim.',
      specDescriptors: [
        field('clusterName', 'Cluster'),
        field('destination', 'Destination', widget.advanced),
      ],
      statusDescriptors: [
        phaseField,
        field('location', 'Location'),
        field('sizeBytes', 'Size (bytes)'),
        field('revision', 'Revision'),
        field('finishedAt', 'Finished'),
        conditionsField,
      ],
    },
  ],
  operandImages: etcdReleases.map((release) => ({ name: `etcd-${release.version}`, image: release.image })),
  samples: ['config/samples/etcd-cluster.yaml', 'config/samples/etcd-backup.yaml'],
};
