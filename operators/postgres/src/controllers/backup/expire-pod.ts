// The short pod that applies retention after a scheduled backup succeeded (ADR 0216): the
// cluster's image running `homeostat-instance expire`, which expires the backups the operator
// names (PG_BACKREST_EXPIRE_SETS) and then the WAL older than the oldest backup left. The operator
// has no pgBackRest and never reads the credentials, so the repository is only ever touched from
// a pod, with the credentials the kubelet takes from the user's Secret, like the backup pod. It
// needs nothing of the instances: expiring works on the bucket alone.
import type { V1Pod } from '@kubernetes/client-node';
import type { PostgresBackup } from '../../api/postgres-backup-types.ts';
import type { BackupSpecFields, PostgresCluster } from '../../api/postgres-cluster-types.ts';
import { renderRepositoryOnlyConfig } from '../../backup/pgbackrest-config.ts';
import { s3DestinationOf, stanzaOf } from '../desired-backup.ts';
import { operatorName } from '../operand-labels.ts';
import { backupPodPaths, repositoryToolPod } from './backup-pod.ts';

/** Marks an expire pod; its value is the cluster's name (what wakes the schedule). */
export const expirePodLabel = 'postgres.homeostat.dev/expire';
/** The informer's selector: only the expire pods this operator made. */
export const expirePodSelector = `app.kubernetes.io/managed-by=${operatorName},${expirePodLabel}`;
/** The variable that carries the labels to expire, space-separated. */
export const expireSetsVariable = 'PG_BACKREST_EXPIRE_SETS';

/**
 * `postgres-expire-<uid>` of the scheduled backup whose success it follows: one per backup, found
 * again after an operator restart, and never a second one for the same backup.
 */
export const expirePodName = (after: PostgresBackup): string =>
  `postgres-expire-${(after.metadata?.uid ?? '').slice(0, 13)}`;

/** The labels an expire pod was asked to expire (what it did, when it ended well). */
export const expireSetsOf = (pod: V1Pod): string[] =>
  (pod.spec?.containers[0]?.env?.find((e) => e.name === expireSetsVariable)?.value ?? '')
    .split(' ')
    .filter((label) => label !== '');

export interface ExpirePodInput {
  /** The scheduled backup whose success retention follows: the pod's owner. */
  readonly after: PostgresBackup;
  readonly cluster: PostgresCluster;
  readonly backupSpec: BackupSpecFields;
  readonly image: string;
  readonly labels: readonly string[];
}

export function desiredExpirePod(input: ExpirePodInput): V1Pod {
  const { cluster } = input;
  const clusterName = cluster.metadata?.name ?? '';
  const { s3 } = input.backupSpec.destination;
  const config = renderRepositoryOnlyConfig({
    destination: s3DestinationOf(s3),
    workDir: backupPodPaths.work,
  });
  return repositoryToolPod({
    name: expirePodName(input.after),
    namespace: cluster.metadata?.namespace ?? 'default',
    clusterName,
    s3,
    image: input.image,
    command: 'expire',
    owner: input.after,
    labels: { 'app.kubernetes.io/component': 'backup-retention', [expirePodLabel]: clusterName },
    env: [
      { name: 'PG_BACKREST_CONFIG', value: config },
      { name: 'PG_BACKREST_CONFIG_FILE', value: `${backupPodPaths.work}/pgbackrest.conf` },
      { name: 'PG_BACKREST_STANZA', value: stanzaOf(cluster) },
      { name: expireSetsVariable, value: input.labels.join(' ') },
    ],
  });
}
