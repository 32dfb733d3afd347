// The EtcdCluster CustomResourceDefinition, built from the schema (the chart's CRD YAML is generated from it).
import { buildCrd, dnsLabelNameRule, specRequiredRule } from '@homeostat/reconcile';
import { group, version } from './api-group.ts';
import { celMajor, celMinor, EtcdClusterStatus, etcdClusterSpecSchema } from './etcd-cluster-schema.ts';
import { supportedVersions } from './etcd-versions.ts';

/** Longest cluster name: its member pods (<name>-<n>) and Services (<name>-peers) must be DNS labels. */
export const maxClusterNameLength = 50;

/** The EtcdCluster CRD in `crdGroup` for a list of versions (tests install variants with more versions). */
export function etcdClusterCrdFor(crdGroup: string, versions: readonly string[]) {
  return buildCrd({
    group: crdGroup,
    kind: 'EtcdCluster',
    plural: 'etcdclusters',
    singular: 'etcdcluster',
    shortNames: ['etcdc'],
    categories: ['homeostat'],
    nameMaxLength: maxClusterNameLength,
    versions: [
      {
        name: version,
        spec: etcdClusterSpecSchema(versions),
        status: EtcdClusterStatus,
        validations: [
          specRequiredRule,
          dnsLabelNameRule('it names the member pods and the Services'),
          {
            // With the transition rule on spec.version, this keeps a second upgrade from starting
            // before the members have finished the first (3.6 → 3.7 → 3.8 in two quick edits).
            rule: `!has(self.status) || !has(self.status.currentVersion) || ${celMajor('self.spec.version')} != ${celMajor('self.status.currentVersion')} || ${celMinor('self.spec.version')} - ${celMinor('self.status.currentVersion')} <= 1`,
            message:
              'spec.version is more than one minor version ahead of what the members run (status.currentVersion): wait until the running upgrade has finished',
            fieldPath: '.spec.version',
            reason: 'FieldValueForbidden',
          },
        ],
        scale: {
          specReplicasPath: '.spec.size',
          statusReplicasPath: '.status.memberCount',
          labelSelectorPath: '.status.selector',
        },
        printerColumns: [
          { name: 'Size', type: 'integer', jsonPath: '.spec.size', description: 'Desired members' },
          { name: 'Ready', type: 'integer', jsonPath: '.status.readyMembers', description: 'Ready members' },
          {
            name: 'Version',
            type: 'string',
            jsonPath: '.status.currentVersion',
            description: 'Oldest version a member runs',
          },
          { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
          { name: 'Leader', type: 'string', jsonPath: '.status.leader', priority: 1 },
          { name: 'Endpoint', type: 'string', jsonPath: '.status.clientEndpoint', priority: 1 },
          { name: 'Last Backup', type: 'date', jsonPath: '.status.lastSuccessfulBackupTime', priority: 1 },
          { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
        ],
      },
    ],
  });
}

/** The EtcdCluster CRD, as installed by the chart. */
export const etcdClusterCrd = etcdClusterCrdFor(group, supportedVersions);
