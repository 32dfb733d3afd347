// What the first instance pod of a cluster made from a backup needs (spec.bootstrap.recovery,
// ADR 0217): pgBackRest's configuration of the source repository (as repo2, so its credentials
// never mix with those of the cluster's own archive), the backup and the target, the source's
// credentials as variables the kubelet takes from the user's Secret, and the source's CA. Given
// only while the cluster has never had a primary (with PG_INITDB=allowed), and outside the pod
// spec's hash: a cluster that exists is never rolled for its bootstrap.
import type { V1EnvVar, V1Volume, V1VolumeMount } from '@kubernetes/client-node';
import type { BackupSpecFields, PostgresCluster } from '../api/postgres-cluster-types.ts';
import { renderRecoveryConfig } from '../backup/pgbackrest-config.ts';
import { repositoryAccessParts, s3DestinationOf, type RepositoryAccess } from './desired-backup.ts';

/** The source repository: pgBackRest's repo2, its CA mounted apart from the cluster's own. */
export const sourceRepository: RepositoryAccess = {
  repo: 2,
  caVolume: 'recovery-ca',
  caMountPath: '/etc/homeostat/recovery-ca',
};

/** `2026-11-27T04:40:50.5Z` as pgBackRest and PostgreSQL both read a time target: `2026-11-27 04:40:50.500+00`. */
export function recoveryTime(rfc3339: string): string {
  const at = new Date(rfc3339);
  if (Number.isNaN(at.getTime()))
    throw new Error(`bootstrap.recovery.target.time '${rfc3339}' is not a time`);
  return `${at.toISOString().replace('T', ' ').replace('Z', '')}+00`;
}

/** What to restore: a repository's stanza, the backup (or the newest that fits) and the target. */
export interface RestoreRequest {
  readonly stanza: string;
  readonly s3: BackupSpecFields['destination']['s3'];
  readonly backup?: string;
  readonly target?: { readonly time?: string; readonly lsn?: string; readonly restorePoint?: string };
}

/** The variables, volume and mount the entrypoint restores with (restore_and_replay). */
export function restorePodParts(
  request: RestoreRequest,
  paths: { readonly pgdata: string; readonly run: string },
): { env: V1EnvVar[]; volumes: V1Volume[]; mounts: V1VolumeMount[] } {
  const workDir = `${paths.run}/pgbackrest-recovery`;
  const { target } = request;
  const [type, value] = target?.time
    ? ['time', recoveryTime(target.time)]
    : target?.lsn
      ? ['lsn', target.lsn.toUpperCase()]
      : target?.restorePoint
        ? ['name', target.restorePoint]
        : ['default', ''];
  const access = repositoryAccessParts(request.s3, sourceRepository);
  return {
    env: [
      {
        name: 'PG_RECOVERY_CONFIG',
        value: renderRecoveryConfig({
          stanza: request.stanza,
          destination: s3DestinationOf(request.s3, sourceRepository),
          workDir,
          dataDir: paths.pgdata,
        }),
      },
      { name: 'PG_RECOVERY_CONFIG_FILE', value: `${workDir}/pgbackrest.conf` },
      { name: 'PG_RECOVERY_STANZA', value: request.stanza },
      { name: 'PG_RECOVERY_TARGET_TYPE', value: type },
      ...(value ? [{ name: 'PG_RECOVERY_TARGET', value }] : []),
      ...(request.backup ? [{ name: 'PG_RECOVERY_SET', value: request.backup }] : []),
      ...access.env,
    ],
    volumes: access.volumes,
    mounts: access.mounts,
  };
}

/** The variables, volume and mount of the restore; nothing when the cluster is not made from a backup. */
export function recoveryPodParts(
  cluster: PostgresCluster,
  paths: { readonly pgdata: string; readonly run: string },
): { env: V1EnvVar[]; volumes: V1Volume[]; mounts: V1VolumeMount[] } {
  const recovery = cluster.spec.bootstrap.recovery;
  if (!recovery) return { env: [], volumes: [], mounts: [] };
  return restorePodParts(
    {
      stanza: recovery.source.clusterName,
      s3: recovery.source.destination.s3,
      ...(recovery.backup ? { backup: recovery.backup } : {}),
      ...(recovery.target ? { target: recovery.target } : {}),
    },
    paths,
  );
}
