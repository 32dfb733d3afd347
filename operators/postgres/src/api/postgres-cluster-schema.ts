// The PostgreSQLCluster API, written once: the TypeScript types (postgres-cluster-types.ts) and the
// CRD YAML in the chart (npm run generate) are both derived from these schemas. Every rule a person
// can break carries a message that says what to do instead.
import { Type } from '@sinclair/typebox';
import {
  conditionsField,
  imageSchema,
  observedGenerationField,
  phaseField,
  quantitySchema,
  requestsWithinLimitsRules,
  resourceRequirementsSchema,
  TolerationSchema,
} from '@homeostat/reconcile';
import {
  boundedParameters,
  operatorOwnedParameterNames,
  operatorOwnedParameters,
} from './operator-owned-parameters.ts';
import { Backup, BackupStatus, Recovery, RestoreDrill, VerifiedBackup } from './backup-schema.ts';
import { operatorRoleNames } from './operator-roles.ts';
import { defaultMajorVersion, supportedMajorVersions } from './postgres-versions.ts';

export const group = 'postgres.homeostat.dev';
export const version = 'v1alpha1';

/** Instances one cluster may have: one primary and up to eight replicas. */
export const maxInstances = 9;

/**
 * Longest cluster name: instance names (`<name>-<n>`) must fit the entrypoint's 50-character bound
 * (the replication slot `homeostat_<instance>` must fit PostgreSQL's 63), and `<name>-superuser`
 * a DNS label.
 */
export const maxClusterNameLength = 48;

// A PostgreSQL identifier the operator creates without quoting surprises: lowercase, <= 63 bytes.
const identifier = (description: string, defaultValue: string) =>
  Type.String({
    minLength: 1,
    maxLength: 63,
    pattern: '^[a-z_][a-z0-9_]*$',
    default: defaultValue,
    description,
  });

export const Storage = Type.Object(
  {
    size: Type.String({
      ...quantitySchema(
        "Size of each instance's PersistentVolumeClaim, e.g. 10Gi. It may grow, never shrink.",
      ),
      default: '1Gi',
    }),
    storageClassName: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 253,
        description: "StorageClass of the claims; unset uses the cluster's default class.",
      }),
    ),
    retention: Type.Union([Type.Literal('Delete'), Type.Literal('Retain')], {
      default: 'Delete',
      description:
        'What happens to the claims and Secrets when the cluster is deleted. Delete: they go with it. Retain: they stay, and a cluster created again with the same name starts from their data and passwords, promoting the instance whose data goes furthest. Claims of instances removed by scaling down are always deleted.',
    }),
  },
  {
    // Defaults are checked against the rules below, so this one is written out in full.
    default: { size: '1Gi', retention: 'Delete' },
    description: 'A PersistentVolumeClaim per instance.',
    'x-kubernetes-validations': [
      {
        // A malformed size is reported once, by the quantity check of the field itself.
        rule: '!isQuantity(self.size) || !isQuantity(oldSelf.size) || quantity(self.size).compareTo(quantity(oldSelf.size)) >= 0',
        message: 'storage.size may grow but never shrink: a volume cannot give space back',
        fieldPath: '.size',
      },
      {
        rule: 'has(self.storageClassName) == has(oldSelf.storageClassName) && (!has(self.storageClassName) || self.storageClassName == oldSelf.storageClassName)',
        message: 'storage.storageClassName cannot change: the claims already exist in their class',
        fieldPath: '.storageClassName',
      },
    ],
  },
);

export const Scheduling = Type.Object(
  {
    antiAffinity: Type.Union([Type.Literal('preferred'), Type.Literal('required'), Type.Literal('none')], {
      default: 'preferred',
      description:
        'Spreading of the instances over topologyKey. preferred: spread when possible; required: never two instances in one domain (an instance stays Pending when there is none left); none: no rule.',
    }),
    topologyKey: Type.String({
      minLength: 1,
      maxLength: 316,
      default: 'kubernetes.io/hostname',
      description: 'The node label that defines a failure domain (a node, a zone).',
    }),
    nodeSelector: Type.Optional(
      Type.Record(Type.String(), Type.String(), { description: 'Node labels the instances must match.' }),
    ),
    tolerations: Type.Optional(
      Type.Array(TolerationSchema, { maxItems: 32, description: 'Tolerations of the instance pods.' }),
    ),
    priorityClassName: Type.Optional(
      Type.String({ minLength: 1, maxLength: 253, description: 'PriorityClass of the instance pods.' }),
    ),
  },
  { default: {}, description: 'Where the instances run.' },
);

export const Synchronous = Type.Object(
  {
    mode: Type.Union([Type.Literal('off'), Type.Literal('preferred'), Type.Literal('required')], {
      default: 'off',
      description:
        'off: asynchronous, a failover may lose the last acknowledged commits. required: a commit is acknowledged only once `number` standbys have it (no acknowledged commit is lost in a failover; writes wait while too few standbys stream). preferred: like required while standbys stream, asynchronous when none does (writes never wait).',
    }),
    number: Type.Integer({
      minimum: 1,
      maximum: maxInstances - 1,
      default: 1,
      description: 'Standbys that must confirm each commit (ANY number). Less than instances.',
    }),
  },
  { default: {}, description: 'Synchronous replication.' },
);

export const Postgresql = Type.Object(
  {
    parameters: Type.Optional(
      Type.Record(
        Type.String(),
        Type.String({
          maxLength: 1024,
          'x-kubernetes-validations': [
            {
              rule: "!self.contains('\\n') && !self.contains('\\r')",
              message: 'a parameter value must fit on one line',
            },
          ],
        }),
        {
          maxProperties: 128,
          description: `postgresql.conf parameters, name to value, e.g. max_connections: "200". The operator owns ${operatorOwnedParameterNames.join(', ')}; setting one is refused. Bounded: superuser_reserved_connections (at least 3), max_standby_streaming_delay, max_standby_archive_delay and max_slot_wal_keep_size (not negative; the last defaults to a quarter of the volume), and while synchronous.mode is not off synchronous_commit (on or remote_apply) and fsync (on).`,
          'x-kubernetes-validations': [
            // One rule per parameter: each refusal names its parameter and why the operator owns
            // it, at a CEL cost the API server accepts (a rule listing the offenders is too dear).
            ...operatorOwnedParameterNames.map((name) => ({
              rule: `!('${name}' in self)`,
              message: `postgresql.parameters may not set ${name}: the operator owns it (${operatorOwnedParameters[name]})`,
            })),
            ...boundedParameters.map(({ rule, message }) => ({ rule, message })),
            {
              rule: "self.all(k, k.matches('^[a-z][a-z0-9_]*([.][a-z][a-z0-9_]*)?$'))",
              message:
                'parameter names are lowercase letters, digits and "_", with one "." for an extension\'s parameter (pg_stat_statements.max)',
            },
          ],
        },
      ),
    ),
    synchronous: Synchronous,
  },
  { default: {}, description: 'PostgreSQL settings.' },
);

export const Bootstrap = Type.Object(
  {
    database: identifier('The application database created with the cluster.', 'app'),
    owner: identifier(
      'The role that owns the application database; its credentials are in the Secret <cluster>-app.',
      'app',
    ),
    recovery: Type.Optional(Recovery),
  },
  {
    default: { database: 'app', owner: 'app' },
    description: 'What the new cluster starts with. Fixed once the cluster exists.',
    'x-kubernetes-validations': [
      {
        rule: 'self == oldSelf',
        message: 'bootstrap cannot change once the cluster exists: its database and owner are already made',
      },
      {
        rule: "!(self.database in ['postgres', 'template0', 'template1'])",
        message: 'bootstrap.database may not be postgres, template0 or template1: PostgreSQL keeps those',
        fieldPath: '.database',
      },
      {
        rule: `!(self.owner in [${operatorRoleNames.map((n) => `'${n}'`).join(', ')}])`,
        message: `bootstrap.owner may not be ${operatorRoleNames.slice(0, -1).join(', ')} or ${operatorRoleNames.at(-1) ?? ''}: the operator creates and uses these roles`,
        fieldPath: '.owner',
      },
      {
        rule: "!self.owner.startsWith('pg_')",
        message: 'bootstrap.owner may not start with pg_: PostgreSQL reserves those names',
        fieldPath: '.owner',
      },
      {
        rule: "!(self.owner in ['public', 'none', 'current_user', 'current_role', 'session_user'])",
        message:
          'bootstrap.owner may not be public, none, current_user, current_role or session_user: PostgreSQL gives these names another meaning',
        fieldPath: '.owner',
      },
    ],
  },
);

export const PostgresClusterSpec = Type.Object(
  {
    instances: Type.Integer({
      minimum: 1,
      maximum: maxInstances,
      default: 3,
      description: `PostgreSQL instances: one primary and instances - 1 streaming replicas (1 to ${maxInstances}). Changed by \`kubectl scale\` too.`,
    }),
    postgresVersion: Type.Union(
      supportedMajorVersions.map((v) => Type.Literal(v)),
      {
        default: defaultMajorVersion,
        description: `PostgreSQL major version: ${supportedMajorVersions.join(' or ')}. Fixed once the cluster exists.`,
        'x-kubernetes-validations': [
          {
            rule: 'self == oldSelf',
            message:
              'postgresVersion cannot change: a major upgrade needs pg_upgrade, which this operator does not do yet',
          },
        ],
      },
    ),
    image: Type.Optional(
      imageSchema(
        "PostgreSQL image; it must hold the operator's instance entrypoint and the binaries of postgresVersion. Defaults to the operator's image for postgresVersion.",
      ),
    ),
    storage: Storage,
    resources: Type.Optional(
      resourceRequirementsSchema('CPU and memory requests and limits of the postgres container.'),
    ),
    scheduling: Scheduling,
    postgresql: Postgresql,
    failoverDelay: Type.String({
      pattern: '^[0-9]{1,4}(ms|s|m)$',
      default: '1s',
      description:
        'How long the primary must stay unreachable before a failover starts (e.g. 0s, 1s, 500ms). Longer rides out short network blips; shorter restores writes sooner.',
      'x-kubernetes-validations': [
        { rule: "duration(self) <= duration('10m')", message: 'failoverDelay may be at most 10m' },
      ],
    }),
    primary: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 63,
        description:
          'The instance to be primary, e.g. mycluster-1. Naming a replica performs a planned switchover to it once it has caught up; while it is set the operator keeps it primary, so after a failover it switches back once that instance is ready again. Unset: the operator chooses and failovers stand.',
      }),
    ),
    bootstrap: Bootstrap,
    superuserAccess: Type.Boolean({
      default: false,
      description:
        'Publish the postgres superuser credentials in the Secret <cluster>-superuser. Off: the superuser cannot log in over the network with a password you know.',
    }),
    podDisruptionBudget: Type.Object(
      {
        enabled: Type.Boolean({
          default: true,
          description:
            'PodDisruptionBudgets that let a node drain take at most one replica at a time and never the primary without a switchover.',
        }),
      },
      { default: {}, description: 'Voluntary disruptions (node drains).' },
    ),
    backup: Type.Optional(Backup),
  },
  {
    'x-kubernetes-validations': [
      {
        rule: "self.postgresql.synchronous.mode == 'off' || self.postgresql.synchronous.number < self.instances",
        message:
          'postgresql.synchronous.number must be less than instances: each synchronous standby is another instance',
        fieldPath: '.postgresql.synchronous.number',
      },
      // Synchronous replication promises that no acknowledged commit is lost; these settings
      // would acknowledge a commit before a standby (or the primary's own disk) holds it.
      {
        rule: "self.postgresql.synchronous.mode == 'off' || !has(self.postgresql.parameters) || !('synchronous_commit' in self.postgresql.parameters) || self.postgresql.parameters['synchronous_commit'] in ['on', 'remote_apply']",
        message:
          'postgresql.parameters.synchronous_commit must be on or remote_apply while postgresql.synchronous.mode is not off: other values acknowledge a commit before a standby has it, and a failover could lose it',
        fieldPath: '.postgresql.parameters',
      },
      {
        rule: "self.postgresql.synchronous.mode == 'off' || !has(self.postgresql.parameters) || !('fsync' in self.postgresql.parameters) || self.postgresql.parameters['fsync'] in ['on', 'true', 'yes', '1']",
        message:
          'postgresql.parameters.fsync may not be off while postgresql.synchronous.mode is not off: an acknowledged commit must be on disk',
        fieldPath: '.postgresql.parameters',
      },
      ...requestsWithinLimitsRules(),
    ],
  },
);

/** What the operator last saw of one instance. */
export const InstanceStatus = Type.Object({
  name: Type.String({ description: 'The instance (and its pod and claim): <cluster>-<n>.' }),
  role: Type.Union(
    [Type.Literal('primary'), Type.Literal('replica'), Type.Literal('fenced'), Type.Literal('unknown')],
    {
      description:
        'primary: accepts writes and is routed to; replica: in recovery; fenced: kept from taking writes during a failover or switchover, or fenced on request (then `fenced` is true); unknown: not reachable.',
    },
  ),
  ready: Type.Boolean({ description: 'Answers SQL in its role (a replica: streaming from the primary).' }),
  timeline: Type.Optional(Type.Integer({ description: 'Its WAL timeline.' })),
  lsn: Type.Optional(
    Type.String({ description: "A primary's current WAL position; a replica's last replayed one." }),
  ),
  lagBytes: Type.Optional(
    Type.Integer({
      minimum: 0,
      description: 'WAL bytes the primary has that this replica has not replayed.',
    }),
  ),
  slotRetainedBytes: Type.Optional(
    Type.Integer({
      minimum: 0,
      description:
        "WAL bytes this replica's replication slot keeps on the primary. Bounded by max_slot_wal_keep_size: past it the slot is invalidated and the replica must be re-cloned.",
    }),
  ),
  fenced: Type.Optional(
    Type.Boolean({
      description:
        'Fenced on request (the cluster annotation postgres.homeostat.dev/fencedInstances): PostgreSQL is stopped in its pod, which stays with its volume, never Ready; no Service routes to it and no failover promotes it.',
    }),
  ),
  formerDataKeptAside: Type.Optional(
    Type.Boolean({
      description:
        'The data of this instance from when it was a primary, which pg_rewind could not bring back, is kept next to its data directory (pgdata.before-clone on its volume): it may hold commits the primary lacks. Delete it to free the space.',
    }),
  ),
});

/** Steps of a failover or a switchover, in the order they run (reinstating instead of promoting when no replica can be). */
export const operationSteps = [
  'quiescing',
  'catching-up',
  'stopping',
  'fencing',
  'electing',
  'reinstating',
  'promoting',
  'routing',
  'rejoining',
] as const;

/**
 * A failover or switchover in progress, written before each step runs, so an operator restarted at
 * any moment continues it where it stopped instead of starting another (and never promotes twice).
 */
export const Operation = Type.Object(
  {
    kind: Type.Union([Type.Literal('failover'), Type.Literal('switchover')]),
    step: Type.Union(
      operationSteps.map((s) => Type.Literal(s)),
      { description: 'The step running now.' },
    ),
    reason: Type.String({ maxLength: 1024, description: 'Why it started.' }),
    startedAt: Type.String({ format: 'date-time' }),
    stepStartedAt: Type.String({ format: 'date-time', description: 'When the current step started.' }),
    fenced: Type.Array(Type.String(), {
      maxItems: maxInstances,
      description: 'Instances kept from taking writes; each rejoins as a replica at the end.',
    }),
    referenceLsn: Type.Optional(
      Type.String({
        description:
          "The old primary's last WAL position seen before the operation: no replica further behind it than the lag bound is promoted.",
      }),
    ),
    quiescedLsn: Type.Optional(
      Type.String({
        description:
          "Switchover: the old primary's WAL position once it stopped taking writes; the target must have received it before it is promoted.",
      }),
    ),
    promoteWith: Type.Optional(
      Type.String({
        maxLength: 4096,
        description: 'promoting: the synchronous_standby_names the promotion sets, saved with the target.',
      }),
    ),
    deadline: Type.Optional(
      Type.String({
        format: 'date-time',
        description:
          'When the current step stops waiting. electing: no replica eligible by then, the old primary is brought back as the primary (nothing was promoted, so its data is the newest). reinstating: the old primary not back by then, a replica eligible by then is promoted instead.',
      }),
    ),
  },
  { description: 'The failover or switchover in progress, if any.' },
);

/**
 * Under dataDurability required, the synchronous standby lists commits may have been acknowledged
 * under: a failover finds a standby holding every acknowledged commit by counting these, not the
 * spec's list, which a scale-down or a raised synchronous.number changes before the standbys of
 * the new list have caught up.
 */
export const CommitQuorums = Type.Object(
  {
    lists: Type.Array(
      Type.Object({
        number: Type.Integer({
          minimum: 0,
          description: 'ANY number: how many of the standbys flushed a commit.',
        }),
        standbys: Type.Array(Type.String(), { maxItems: maxInstances * 4 }),
      }),
      {
        maxItems: 64,
        description:
          'Every list commits may have been acknowledged under, or the primary runs from its next reload.',
      },
    ),
    running: Type.Optional(
      Type.Object(
        {
          number: Type.Integer({ minimum: 0 }),
          standbys: Type.Array(Type.String(), { maxItems: maxInstances * 4 }),
          seenAt: Type.String({
            format: 'date-time',
            description: 'When the primary was first seen running it.',
          }),
          fromLsn: Type.Optional(
            Type.String({
              description:
                "The primary's WAL position once every process applied the list; the other lists are dropped once a quorum of it flushed this.",
            }),
          ),
        },
        { description: 'The list the primary was last seen running.' },
      ),
    ),
  },
  {
    description:
      'The synchronous standby lists an acknowledged commit may count on (dataDurability required).',
  },
);

export const phases = [
  'Creating',
  'Healthy',
  'Degraded',
  'FailingOver',
  'SwitchingOver',
  'Scaling',
  'Unavailable',
] as const;

export const PostgresClusterStatus = Type.Object({
  observedGeneration: observedGenerationField(),
  phase: phaseField(phases, 'One word for where the cluster is; the conditions say why.'),
  instances: Type.Optional(
    Type.Integer({ description: 'Instance pods that exist (the scale subresource reads this).' }),
  ),
  readyInstances: Type.Optional(Type.Integer({ description: 'Instances ready in their role.' })),
  currentPrimary: Type.Optional(
    Type.String({ description: 'The instance that is primary: the only one the -rw Service routes to.' }),
  ),
  targetPrimary: Type.Optional(
    Type.String({
      description:
        'The instance a failover or switchover in progress is promoting. Equal to currentPrimary when none is.',
    }),
  ),
  failingSince: Type.Optional(
    Type.String({
      format: 'date-time',
      description: 'Since when the primary has been unreachable or not accepting writes.',
    }),
  ),
  operation: Type.Optional(Operation),
  commitQuorums: Type.Optional(CommitQuorums),
  timeline: Type.Optional(Type.Integer({ description: "The primary's WAL timeline." })),
  instanceStatuses: Type.Optional(
    Type.Array(InstanceStatus, {
      maxItems: maxInstances + 8,
      description: 'Each instance as last observed.',
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['name'],
    }),
  ),
  failovers: Type.Optional(Type.Integer({ minimum: 0, description: 'Failovers completed.' })),
  switchovers: Type.Optional(Type.Integer({ minimum: 0, description: 'Switchovers completed.' })),
  selector: Type.Optional(
    Type.String({ description: 'Label selector of the instance pods (the scale subresource reads this).' }),
  ),
  backup: Type.Optional(BackupStatus),
  lastVerifiedBackup: Type.Optional(VerifiedBackup),
  restoreDrill: Type.Optional(RestoreDrill),
  conditions: conditionsField(
    'Available, Progressing and Degraded, and ContinuousArchiving while spec.backup is set (KEP-1623 conditions).',
  ),
});
