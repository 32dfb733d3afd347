// The EtcdCluster CustomResourceDefinition, built from the schema (the chart's CRD YAML is generated from it).
import { buildCrd, dnsLabelNameRule, specRequiredRule } from '@homeostat/reconcile';
import { group, version } from './api-group.ts';
import { celMajor, celMinor, EtcdClusterStatus, etcdClusterSpecSchema } from './etcd-cluster-schema.ts';
import { supportedVersions } from './etcd-versions.ts';

/** Longest cluster name: its member pods (<name>-<n>) and Services (<name>-peers) must be DNS labels. */
export const maxClusterNameLength = 50;

const target = 'self.spec.version';
const previous = 'oldSelf.spec.version';
const recorded = 'self.status.clusterVersion';
const minorString = (v: string) => `${v}.split('.')[0] + '.' + ${v}.split('.')[1]`;

/**
 * spec.version may go down a minor only while etcd's cluster version is still the target's minor:
 * an upgrade that has not finished (a member failing on the new version) can go back, one whose
 * cluster version moved cannot. The rule is on the whole object because a rule on spec.version
 * cannot read status. A status recorded before the cluster version moved slips through; the
 * controller checks etcd itself again before it touches a member (version-change.ts).
 */
export const downgradeRule = {
  rule: [
    `!has(oldSelf.spec) || !has(self.spec)`,
    `${celMajor(target)} > ${celMajor(previous)}`,
    `(${celMajor(target)} == ${celMajor(previous)} && ${celMinor(target)} >= ${celMinor(previous)})`,
    `(has(self.status) && has(${recorded}) && ${celMajor(target)} == ${celMajor(recorded)} && ${celMinor(target)} == ${celMinor(recorded)})`,
  ].join(' || '),
  message:
    'spec.version cannot go back to an older minor version unless status.clusterVersion still names that minor: etcd cannot go back once the cluster version has moved; restore a backup into a new cluster instead',
  messageExpression: `'cannot downgrade from ' + ${previous} + ' to ' + ${target} + ': ' + (has(self.status) && has(${recorded}) ? 'etcd ' + ${minorString(recorded)} + ' cannot go back to ' + ${minorString(target)} + ' once the cluster version is ' + ${minorString(recorded)} + ' (status.clusterVersion ' + ${recorded} + '): every member has run it and the data may already be in a form ' + ${minorString(target)} + ' cannot read; restore a backup into a new cluster running ' + ${target} + ' instead' : 'no cluster version is recorded yet (status.clusterVersion); etcd can go back to an older minor only while its cluster version is still that minor (an upgrade that has not finished): try again once the operator has recorded it')`,
  fieldPath: '.spec.version',
  reason: 'FieldValueForbidden' as const,
};

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
          downgradeRule,
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
          {
            name: 'Backup Verified',
            type: 'string',
            jsonPath: ".status.conditions[?(@.type=='BackupVerified')].status",
            description: 'What the last restore drill found (the BackupVerified condition)',
            priority: 1,
          },
          { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
        ],
      },
    ],
  });
}

/** The EtcdCluster CRD, as installed by the chart. */
export const etcdClusterCrd = etcdClusterCrdFor(group, supportedVersions);
