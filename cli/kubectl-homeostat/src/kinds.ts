// The custom resources the plugin knows: how kubectl names them, what a user may type for them,
// and what each supports. One table, so a new kind is one entry.

export interface HomeostatKind {
  kind: string;
  apiVersion: string;
  /** kubectl's resource name (plural.group), unambiguous whatever else the cluster serves. */
  resource: string;
  /** What a user may type before `/NAME` (singular, plural, short names), lower case. */
  aliases: readonly string[];
  /** The kind `backup` creates for it, if it has backups (another entry of the table). */
  backupKind?: string;
  /** Labels (beside app.kubernetes.io/instance=NAME) of the pods `restart` rolls, if it has any. */
  podLabels?: Readonly<Record<string, string>>;
}

export const homeostatKinds: readonly HomeostatKind[] = [
  {
    kind: 'PostgreSQLCluster',
    apiVersion: 'postgres.homeostat.dev/v1alpha1',
    resource: 'postgresqlclusters.postgres.homeostat.dev',
    aliases: ['postgresqlcluster', 'postgresqlclusters', 'pgc'],
    backupKind: 'PostgreSQLBackup',
    podLabels: {
      'app.kubernetes.io/managed-by': 'postgres-operator',
      'app.kubernetes.io/component': 'database',
    },
  },
  {
    kind: 'PostgreSQLBackup',
    apiVersion: 'postgres.homeostat.dev/v1alpha1',
    resource: 'postgresqlbackups.postgres.homeostat.dev',
    aliases: ['postgresqlbackup', 'postgresqlbackups', 'pgbackup', 'pgb'],
  },
  {
    kind: 'EtcdCluster',
    apiVersion: 'etcd.homeostat.dev/v1alpha1',
    resource: 'etcdclusters.etcd.homeostat.dev',
    aliases: ['etcdcluster', 'etcdclusters', 'etcdc'],
    backupKind: 'EtcdBackup',
    podLabels: { 'app.kubernetes.io/managed-by': 'etcd-operator', 'app.kubernetes.io/component': 'member' },
  },
  {
    kind: 'EtcdBackup',
    apiVersion: 'etcd.homeostat.dev/v1alpha1',
    resource: 'etcdbackups.etcd.homeostat.dev',
    aliases: ['etcdbackup', 'etcdbackups', 'etcdbk'],
  },
  {
    kind: 'Memcached',
    apiVersion: 'cache.homeostat.dev/v1alpha1',
    resource: 'memcacheds.cache.homeostat.dev',
    aliases: ['memcached', 'memcacheds', 'mc'],
    podLabels: {
      'app.kubernetes.io/managed-by': 'memcached-operator',
      'app.kubernetes.io/component': 'cache',
    },
  },
];

/** The kind `alias` names, or undefined. */
export function kindNamed(alias: string): HomeostatKind | undefined {
  const lower = alias.toLowerCase();
  return homeostatKinds.find(
    (k) => k.aliases.includes(lower) || k.resource === lower || k.kind.toLowerCase() === lower,
  );
}

/** The kind `backup` creates for `kind`, or undefined when it has no backups. */
export function backupKindOf(kind: HomeostatKind): HomeostatKind | undefined {
  return kind.backupKind === undefined ? undefined : kindNamed(kind.backupKind);
}

/** The kinds a `TYPE/NAME` or bare `NAME` argument may be, and the name. */
export function parseTarget(target: string): { kinds: readonly HomeostatKind[]; name: string } {
  const slash = target.indexOf('/');
  if (slash === -1) return { kinds: homeostatKinds, name: target };
  const alias = target.slice(0, slash);
  const kind = kindNamed(alias);
  if (!kind) {
    const known = homeostatKinds.map((k) => k.aliases.at(-1)).join(', ');
    throw new UsageError(`"${alias}" is not a Homeostat kind (one of: ${known})`);
  }
  return { kinds: [kind], name: target.slice(slash + 1) };
}

/** A mistake in how the plugin was called: printed with the usage, exit code 2. */
export class UsageError extends Error {}
