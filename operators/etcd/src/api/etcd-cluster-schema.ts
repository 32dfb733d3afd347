// The EtcdCluster API, written once: the TypeScript types (etcd-cluster-types.ts) and the CRD YAML in
// the chart (npm run generate) are both derived from these schemas.
import { Type } from '@sinclair/typebox';
import {
  conditionsField,
  observedGenerationField,
  phaseField,
  TolerationSchema,
  affinitySchema,
  quantitySchema,
  requestsWithinLimitsRules,
  resourceRequirementsSchema,
} from '@homeostat/reconcile';
import { cronSchedule, spreadSchema, verifiedBackupProperties } from '@homeostat/operator-kit/api';
import { BackupDestination } from './destination-schema.ts';
import { supportedVersions } from './etcd-versions.ts';

/** The most members an EtcdCluster may have: beyond 7, every write waits for more peers and gains little. */
export const maxSize = 7;

/** CEL: the major and minor numbers of a version string ("3.6.16" → 3, 6). */
export const celMajor = (v: string) => `int(${v}.split('.')[0])`;
export const celMinor = (v: string) => `int(${v}.split('.')[1])`;

const versionSchema = (versions: readonly string[]) =>
  Type.Union(
    versions.map((v) => Type.Literal(v)),
    {
      default: versions[versions.length - 1],
      maxLength: 16,
      description: `etcd version the members run, one of those this operator ships (${versions.join(', ')}). Changing it rolls the members one at a time; move up one minor version at a time. Going back to an older minor is allowed only while status.clusterVersion still names that minor (an upgrade that has not finished, e.g. a member failing on the new version); a patch of the same minor is always allowed.`,
      'x-kubernetes-validations': [
        {
          rule: `${celMajor('self')} != ${celMajor('oldSelf')} || ${celMinor('self')} - ${celMinor('oldSelf')} <= 1`,
          messageExpression: `'cannot upgrade from ' + oldSelf + ' to ' + self + ' at once: etcd upgrades one minor version at a time; upgrade to the next minor version first and wait until status.currentVersion shows it'`,
          reason: 'FieldValueForbidden',
        },
      ],
    },
  );

const Storage = Type.Object(
  {
    size: quantitySchema(
      "Size of each member's PersistentVolumeClaim, e.g. 8Gi. It may grow (when the storage class allows expansion), never shrink.",
    ),
    storageClassName: Type.Optional(
      Type.String({
        maxLength: 253,
        description: "Storage class of the members' claims; the cluster's default class when empty.",
      }),
    ),
    retention: Type.Union([Type.Literal('Delete'), Type.Literal('Retain')], {
      default: 'Delete',
      description:
        'What happens to the claims when the EtcdCluster is deleted. Delete: they go with it. Retain: they stay, and an EtcdCluster created again with the same name restarts its members on them, with every key. Claims of members removed by scaling down are always deleted.',
    }),
  },
  {
    // Defaults are checked against the rules below, so this one is written out in full.
    default: { size: '8Gi', retention: 'Delete' },
    description:
      "Each member's data lives in its own PersistentVolumeClaim, kept when the member's pod is deleted.",
    'x-kubernetes-validations': [
      {
        // A malformed size is reported once, by the quantity check of the field itself.
        rule: '!isQuantity(self.size) || !isQuantity(oldSelf.size) || !quantity(self.size).isLessThan(quantity(oldSelf.size))',
        message: 'storage.size cannot shrink: a PersistentVolumeClaim can only grow',
        fieldPath: '.size',
      },
      {
        rule: 'has(self.storageClassName) == has(oldSelf.storageClassName) && (!has(self.storageClassName) || self.storageClassName == oldSelf.storageClassName)',
        message:
          'storage.storageClassName cannot change: existing claims keep their class; create a new cluster and restore a backup into it',
        fieldPath: '.storageClassName',
      },
      {
        rule: "!isQuantity(self.size) || quantity(self.size).isGreaterThan(quantity('256Mi'))",
        message:
          'storage.size must be larger than 256Mi: etcd needs room for its database and write-ahead log',
        fieldPath: '.size',
      },
    ],
  },
);

const Spread = spreadSchema({
  pods: 'members',
  defaultPolicy: 'Preferred',
  description: 'How members are spread so that one failure takes at most one of them.',
});

const Scheduling = Type.Object(
  {
    spread: Spread,
    nodeSelector: Type.Optional(
      Type.Record(Type.String(), Type.String(), { description: 'Node labels member pods must match.' }),
    ),
    tolerations: Type.Optional(
      Type.Array(TolerationSchema, { maxItems: 32, description: 'Tolerations of the member pods.' }),
    ),
    affinity: Type.Optional(
      affinitySchema('Affinity rules of the member pods (core/v1 Affinity), passed as written.'),
    ),
    priorityClassName: Type.Optional(
      Type.String({ maxLength: 253, description: 'PriorityClass of the member pods.' }),
    ),
  },
  { default: {}, description: 'Where member pods may run.' },
);

const ProvidedTls = Type.Object(
  {
    serverSecretName: Type.String({
      minLength: 1,
      maxLength: 253,
      description:
        'kubernetes.io/tls Secret (tls.crt, tls.key, ca.crt) the members serve clients with. Its certificate must name the client Service and every member (see the guide).',
    }),
    peerSecretName: Type.String({
      minLength: 1,
      maxLength: 253,
      description:
        'kubernetes.io/tls Secret the members use between themselves, for server and client authentication.',
    }),
    clientSecretName: Type.String({
      minLength: 1,
      maxLength: 253,
      description:
        'kubernetes.io/tls Secret with a client certificate signed by the server CA; the operator connects with it, and status.clientSecret names it.',
    }),
  },
  {
    description:
      'Certificates you manage (e.g. with cert-manager) instead of the ones the operator generates.',
  },
);

const Tls = Type.Object(
  {
    enabled: Type.Boolean({
      default: true,
      description:
        'TLS for peers and clients, with client certificate authentication. Fixed at creation: switching it changes every peer URL.',
    }),
    provided: Type.Optional(ProvidedTls),
  },
  {
    // Written out: the API server checks a default against the rules below without defaulting inside it.
    default: { enabled: true },
    description:
      'TLS between members and for clients. By default the operator generates a CA (kept in the Secret <name>-ca) and the certificates.',
    'x-kubernetes-validations': [
      {
        rule: 'self.enabled == oldSelf.enabled',
        message:
          'tls.enabled cannot change on an existing cluster: every peer URL would change; create a new cluster and restore a backup into it',
        fieldPath: '.enabled',
        reason: 'FieldValueForbidden',
      },
      {
        rule: 'self.enabled || !has(self.provided)',
        message: 'tls.provided needs tls.enabled: true',
        fieldPath: '.provided',
      },
    ],
  },
);

// The schedules are five cron fields or a macro (cronSchedule, shared with the PostgreSQL operator);
// the operator parses them fully and reports what the API server's pattern lets through.
const BackupVerify = Type.Object(
  {
    schedule: Type.Optional(
      cronSchedule(
        'When to run a restore drill of the newest Succeeded backup, in cron syntax (e.g. "30 3 * * *"), in UTC. Without it, drills run only on request (the etcd.homeostat.dev/verify-backup annotation).',
        'verify.schedule',
      ),
    ),
    timeoutSeconds: Type.Integer({
      minimum: 60,
      maximum: 86400,
      default: 1800,
      description:
        'A drill not done by then (a pod that cannot be scheduled, an image that cannot be pulled, a restore that hangs) fails with DrillTimedOut and its pod and claim are deleted.',
    }),
  },
  {
    description:
      "Restore drills: the newest Succeeded backup is restored into a short-lived single-member etcd (its own pod and claim, reachable by no Service) and its HashKV compared with the one recorded at backup time. Reported in status.lastVerifiedBackup and the BackupVerified condition. The cluster's own members, claims and Services are never touched.",
  },
);

const Backup = Type.Object(
  {
    schedule: Type.Optional(
      cronSchedule(
        'When to take scheduled backups, in cron syntax (e.g. "0 */6 * * *", or @daily), in UTC. No scheduled backups when empty.',
        'schedule',
      ),
    ),
    keep: Type.Integer({
      minimum: 1,
      maximum: 1000,
      default: 7,
      description:
        'Scheduled backups to keep: older ones (objects and files) are deleted. Backups you create yourself are never deleted.',
    }),
    destination: BackupDestination,
    verify: Type.Optional(BackupVerify),
  },
  {
    description:
      'Scheduled backups, and the destination EtcdBackups of this cluster use when they name none.',
  },
);

const BackupLocation = Type.Object(
  {
    destination: BackupDestination,
    key: Type.String({
      minLength: 1,
      maxLength: 1024,
      description: 'Object key in the bucket, or file path inside the claim (relative to directory).',
    }),
    sha256: Type.Optional(
      Type.String({
        pattern: '^[0-9a-f]{64}$',
        description:
          'Expected sha256 of the snapshot (as EtcdBackup status gives it); refused when it differs.',
      }),
    ),
  },
  { description: 'A backup file by its location.' },
);

const Bootstrap = Type.Object(
  {
    fromBackup: Type.Optional(
      Type.Object(
        {
          backupName: Type.Optional(
            Type.String({
              minLength: 1,
              maxLength: 253,
              description: 'An EtcdBackup in this namespace that has completed.',
            }),
          ),
          location: Type.Optional(BackupLocation),
        },
        {
          description:
            'Start from a backup: its keys at its revision, in a new cluster (new member IDs). The source cluster is never touched.',
          'x-kubernetes-validations': [
            {
              rule: 'has(self.backupName) != has(self.location)',
              message: 'bootstrap.fromBackup takes exactly one of backupName and location',
            },
          ],
        },
      ),
    ),
  },
  { description: 'How a new cluster starts. Fixed at creation.' },
);

export const quorumLossPolicies = ['Manual', 'RestoreNewestBackup'] as const;

const Recovery = Type.Object(
  {
    onQuorumLoss: Type.Union(
      quorumLossPolicies.map((p) => Type.Literal(p)),
      {
        default: 'Manual',
        description:
          'What the operator does when a majority of members stays unreachable for afterSeconds. Manual: report QuorumLost (a condition and an Event) and wait for a person. RestoreNewestBackup: make the cluster again from the newest Succeeded EtcdBackup of this cluster whose file verifies, as a new etcd cluster (new cluster and member IDs; every member pod and claim of the lost cluster is deleted first; writes after that backup are lost). The backup itself is only read.',
      },
    ),
    afterSeconds: Type.Integer({
      minimum: 10,
      maximum: 86400,
      default: 300,
      description:
        'How long quorum must stay lost before RestoreNewestBackup acts, so that members coming back by themselves (a node restarting) are never replaced by a backup.',
    }),
  },
  { description: 'Disaster recovery: what happens when a majority of members is lost.' },
);

const Defragmentation = Type.Object(
  {
    fragmentationPercent: Type.Integer({
      minimum: 0,
      maximum: 90,
      default: 50,
      description:
        'Defragment a member once this share of its database file is free pages (1 - in use / size), in percent; 0 turns automatic defragmentation off. Members go one at a time, followers first and the leader last, and only while every member is a healthy voter of a cluster of three or more (a member is blocked while it defragments, so a one-member cluster is never defragmented automatically).',
    }),
    minimumDbSizeMiB: Type.Integer({
      minimum: 0,
      default: 100,
      description:
        'Leave members whose database file is smaller than this many MiB alone (a small file is cheap to keep and its fragmentation says little).',
    }),
  },
  {
    default: { fragmentationPercent: 50, minimumDbSizeMiB: 100 },
    description:
      "When the operator defragments members to give the database file's free pages back to the file system. A NOSPACE alarm is always recovered from (compact, defragment each member, disarm).",
  },
);

/**
 * The spec schema for a list of supported versions. The operator's CRD uses the versions it ships;
 * tests build it with more, to exercise the upgrade rules on a real API server.
 */
export function etcdClusterSpecSchema(versions: readonly string[]) {
  return Type.Object(
    {
      size: Type.Integer({
        minimum: 1,
        maximum: maxSize,
        default: 3,
        description:
          'Number of members: 1, 3, 5 or 7. Changed one member at a time (a learner is added, caught up and promoted; or a member removed).',
        'x-kubernetes-validations': [
          {
            rule: 'self % 2 == 1',
            // Fixed: a messageExpression with string(self) is beyond the API server's CEL cost budget.
            message:
              'size must be odd (1, 3, 5 or 7): etcd needs a majority of members to agree on every write, so an even size survives no more failures than the odd size below it (4 members survive 1 failure, as 3 do) and adds one more member every write must wait for',
          },
        ],
      }),
      version: versionSchema(versions),
      storage: Storage,
      resources: Type.Optional(
        resourceRequirementsSchema(
          'CPU and memory requests and limits of each member. Default: requests of 100m CPU and 256Mi memory, no limits.',
        ),
      ),
      scheduling: Scheduling,
      tls: Tls,
      backup: Type.Optional(Backup),
      bootstrap: Type.Optional(Bootstrap),
      recovery: Type.Optional(Recovery),
      defragmentation: Defragmentation,
      paused: Type.Boolean({
        default: false,
        description:
          'Stop changing anything for this cluster (members, objects, backups); status keeps being reported. For maintenance by hand.',
      }),
    },
    {
      'x-kubernetes-validations': [
        ...requestsWithinLimitsRules(),
        {
          rule: 'has(self.bootstrap) == has(oldSelf.bootstrap) && (!has(self.bootstrap) || self.bootstrap == oldSelf.bootstrap)',
          message: 'bootstrap cannot change: it applies only when the cluster is created',
          fieldPath: '.bootstrap',
          reason: 'FieldValueForbidden',
        },
      ],
    },
  );
}

/** The spec of an EtcdCluster, for the versions this operator ships. */
export const EtcdClusterSpec = etcdClusterSpecSchema(supportedVersions);

export const phases = [
  'Creating',
  'Running',
  'Scaling',
  'Upgrading',
  'Restoring',
  'Recovering',
  'Degraded',
  'QuorumLost',
  'Paused',
  'Failed',
] as const;

const MemberStatus = Type.Object({
  name: Type.String({ description: 'Member name (its pod and claim are named after it).' }),
  id: Type.Optional(Type.String({ description: 'etcd member ID in hex, as etcdctl prints it.' })),
  role: Type.Optional(
    Type.Union([Type.Literal('Voter'), Type.Literal('Learner')], {
      description: 'Learner: catching up, not voting yet. Voter: a full member.',
    }),
  ),
  ready: Type.Boolean({ description: 'The member answers and follows the leader.' }),
  leader: Type.Optional(Type.Boolean({ description: 'The member is the leader.' })),
  version: Type.Optional(Type.String({ description: 'etcd version the member runs.' })),
  dbSizeBytes: Type.Optional(Type.Integer({ description: 'Size of its database file.' })),
  dbSizeInUseBytes: Type.Optional(
    Type.Integer({ description: 'Bytes of the database in use; the rest is reclaimed by defragmentation.' }),
  ),
});

export const recoveryPhases = ['Waiting', 'Restoring', 'Recovered', 'Cancelled', 'Failed'] as const;

const RecoveryStatus = Type.Object(
  {
    phase: Type.Union(
      recoveryPhases.map((p) => Type.Literal(p)),
      {
        description:
          'Waiting: quorum is lost, the restore starts at restoreAt unless a majority answers before. Restoring: the lost members are deleted and the first member restored from backupName. Recovered: the new cluster answers. Cancelled: a majority answered again in time. Failed: no backup could be used (the message says why; tried again while quorum stays lost).',
      },
    ),
    generation: Type.Integer({
      minimum: 0,
      description:
        'How many times this cluster was made again from a backup: each time is a new etcd cluster (its initial-cluster token ends in -<generation>).',
    }),
    quorumLostAt: Type.String({
      format: 'date-time',
      description: 'When the operator first saw quorum lost.',
    }),
    restoreAt: Type.Optional(
      Type.String({ format: 'date-time', description: 'When the restore starts if quorum stays lost.' }),
    ),
    backupName: Type.Optional(Type.String({ description: 'The EtcdBackup restored from.' })),
    backupRevision: Type.Optional(Type.String({ description: 'The revision that backup holds.' })),
    lostClusterId: Type.Optional(Type.String({ description: 'The etcd cluster ID that lost its quorum.' })),
    membersDeleted: Type.Optional(
      Type.Boolean({ description: "The lost cluster's member pods and claims are gone." }),
    ),
    startedAt: Type.Optional(Type.String({ format: 'date-time' })),
    finishedAt: Type.Optional(Type.String({ format: 'date-time' })),
    message: Type.Optional(Type.String({ description: 'What the operator did last, in a sentence.' })),
  },
  { description: 'The last disaster recovery (spec.recovery), step by step.' },
);

export const EtcdClusterStatus = Type.Object({
  observedGeneration: observedGenerationField(),
  phase: phaseField(phases, 'One word for the state; the conditions say why.'),
  conditions: conditionsField(
    'Available, Progressing, Degraded, Scaling, Upgrading, Restoring, QuorumLost, Recovering, BackupVerified (KEP-1623 conditions; see the guide).',
  ),
  clusterId: Type.Optional(
    Type.String({
      description:
        'etcd cluster ID in hex, set once the first member answers. A cluster with an ID is never bootstrapped again.',
    }),
  ),
  members: Type.Optional(
    Type.Array(MemberStatus, {
      description: 'Members as etcd lists them, and members the operator is creating.',
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['name'],
    }),
  ),
  memberCount: Type.Optional(
    Type.Integer({ description: 'Members etcd lists (the scale subresource reads this).' }),
  ),
  readyMembers: Type.Optional(Type.Integer({ description: 'Members that are ready.' })),
  selector: Type.Optional(
    Type.String({ description: 'Label selector of the member pods (the scale subresource reads this).' }),
  ),
  currentVersion: Type.Optional(
    Type.String({
      maxLength: 32,
      pattern: '^[0-9]+\\.[0-9]+\\.[0-9]+$',
      description: 'The oldest etcd version any member runs (the cluster version while an upgrade rolls).',
    }),
  ),
  clusterVersion: Type.Optional(
    Type.String({
      maxLength: 32,
      pattern: '^[0-9]+\\.[0-9]+\\.[0-9]+$',
      description:
        "The cluster version etcd itself reports (its /version endpoint's etcdcluster, e.g. 3.6.0): the minor every member has agreed on. It moves up only once every member runs the new minor, and then etcd cannot go back: spec.version may return to an older minor only while this still names that minor. Kept as last read while no member answers.",
    }),
  ),
  leader: Type.Optional(Type.String({ description: 'Name of the leader member.' })),
  clientEndpoint: Type.Optional(Type.String({ description: 'URL clients connect to (the client Service).' })),
  clientSecret: Type.Optional(
    Type.String({
      description: 'Secret with the client certificate (tls.crt, tls.key, ca.crt) that clients connect with.',
    }),
  ),
  recovery: Type.Optional(RecoveryStatus),
  lastVerifiedBackup: Type.Optional(
    Type.Object(
      {
        ...verifiedBackupProperties,
        revision: Type.String({ description: 'The revision whose HashKV the restored copy matched.' }),
        hashKV: Type.String({
          description: "etcd's HashKV at that revision, equal in the backup and the restored copy.",
        }),
      },
      { description: 'The newest backup a restore drill proved (spec.backup.verify).' },
    ),
  ),
  lastBackupDrillTime: Type.Optional(
    Type.String({
      format: 'date-time',
      description:
        'When the last restore drill started, whatever it found (the BackupVerified condition says what).',
    }),
  ),
  lastBackupDrillRequest: Type.Optional(
    Type.String({
      description: 'The etcd.homeostat.dev/verify-backup annotation value the last drill answered.',
    }),
  ),
  lastSuccessfulBackupTime: Type.Optional(
    Type.String({
      format: 'date-time',
      description:
        'When the newest EtcdBackup of this cluster that succeeded finished (scheduled or not); alert when it grows old.',
    }),
  ),
});
