// The first member of a cluster restored from a backup: its pod gets three init containers in
// front of etcd (docs/adr/0302). The operator image fetches the snapshot into the member's own
// volume and checks its sha256; etcd's own etcdutl (from the member's etcd image, so the restore is
// done by the version that will run it) restores it as a one-member cluster; the operator image
// moves the result into place. The cluster then grows by learners as any new cluster does.
import type { V1Container, V1EnvVar, V1Pod } from '@kubernetes/client-node';
import type { EtcdCluster } from '../../api/etcd-cluster-types.ts';
import { clusterToken } from '../cluster-names.ts';
import { dataDir, dataMountPath } from '../desired-member-pod.ts';
import type { MemberUrls } from '../member-addressing.ts';
import type { RestoreSource } from './restore-source.ts';

/** Inside the member's volume: the snapshot and etcdutl's staging directory. */
export const restoreWorkDir = `${dataMountPath}/restore`;
export const etcdutlBinary = '/usr/local/bin/etcdutl';

// Optional: the kubelet resolves a required reference before the container starts, so once the
// Secret is rotated away a rerun of the init containers (a node reboot) would never start, though
// fetch-backup skips the download, and needs no credentials, when the member already has data. A
// first restore without them fails in fetch-backup, saying which are missing.
const secretEnv = (name: string, secret: string, key: string): V1EnvVar => ({
  name,
  valueFrom: { secretKeyRef: { name: secret, key, optional: true } },
});

/** True when `pod` still carries the restore init containers it was bootstrapped with. */
export function carriesRestore(pod: V1Pod): boolean {
  return (pod.spec?.initContainers?.length ?? 0) > 0;
}

/** The three init containers that put a backup into `member`'s volume before its etcd starts. */
export function restoreInitContainers(
  cluster: EtcdCluster,
  member: string,
  urls: MemberUrls,
  source: RestoreSource,
  images: { readonly operator: string; readonly etcd: string },
): V1Container[] {
  // The same token the member's etcd is given: the restored cluster is a new one.
  return restoreStepsInto({ member, peerUrl: urls.peerUrl, token: clusterToken(cluster) }, source, images);
}

/** Who etcdutl makes the restored data a one-member cluster of: the member, its peer URL, a token. */
export interface RestoredMember {
  readonly member: string;
  readonly peerUrl: string;
  readonly token: string;
}

/**
 * The three steps into the volume mounted at the data path (a member's claim, or a restore
 * drill's own), restored as `target`. Security context and resources are the caller's (a
 * member's are its etcd container's: withRestore copies them).
 */
export function restoreStepsInto(
  target: RestoredMember,
  source: RestoreSource,
  images: { readonly operator: string; readonly etcd: string },
): V1Container[] {
  const base = { volumeMounts: [{ name: 'data', mountPath: dataMountPath }] };
  const paths = [`--data-dir=${dataDir}`, `--work-dir=${restoreWorkDir}`];
  return [fetchContainer(source, images.operator, paths, base), ...restoreSteps(target, images, paths, base)];
}

/** Where the claim of a backup restored from a claim is mounted (read-only) in the member's pod. */
export const backupSourceMountPath = '/var/lib/etcd-backup-source';
export const backupSourceVolume = 'backup-source';

/** The first init container: the snapshot into the member's volume, from the bucket or the claim. */
function fetchContainer(
  source: RestoreSource,
  image: string,
  paths: readonly string[],
  base: Pick<V1Container, 'volumeMounts'>,
): V1Container {
  const sha = source.sha256 ? [`--sha256=${source.sha256}`] : [];
  if (source.claim) {
    return {
      name: 'copy-backup',
      image,
      args: ['copy-backup', ...paths, `--source=${backupSourceMountPath}/${source.claim.path}`, ...sha],
      volumeMounts: [
        ...(base.volumeMounts ?? []),
        { name: backupSourceVolume, mountPath: backupSourceMountPath, readOnly: true },
      ],
    };
  }
  const s3 = source.s3;
  if (!s3) throw new Error(`${source.describe}: neither a bucket nor a claim`);
  return {
    name: 'fetch-backup',
    image,
    args: [
      'fetch-backup',
      ...paths,
      `--bucket=${s3.bucket}`,
      `--key=${source.key}`,
      `--region=${s3.region}`,
      `--force-path-style=${String(s3.forcePathStyle)}`,
      ...(s3.endpoint ? [`--endpoint=${s3.endpoint}`] : []),
      ...sha,
    ],
    env: [
      secretEnv('AWS_ACCESS_KEY_ID', s3.credentialsSecretName, 'accessKeyId'),
      secretEnv('AWS_SECRET_ACCESS_KEY', s3.credentialsSecretName, 'secretAccessKey'),
      secretEnv('AWS_SESSION_TOKEN', s3.credentialsSecretName, 'sessionToken'),
    ],
    ...base,
  };
}

/** etcdutl's restore in the member's etcd image, then the operator image moving it into place. */
function restoreSteps(
  { member, peerUrl, token }: RestoredMember,
  images: { readonly operator: string; readonly etcd: string },
  paths: readonly string[],
  base: Pick<V1Container, 'volumeMounts'>,
): V1Container[] {
  return [
    {
      name: 'restore',
      image: images.etcd,
      command: [etcdutlBinary],
      args: [
        'snapshot',
        'restore',
        `${restoreWorkDir}/snapshot.db`,
        `--name=${member}`,
        `--initial-cluster=${member}=${peerUrl}`,
        `--initial-cluster-token=${token}`,
        `--initial-advertise-peer-urls=${peerUrl}`,
        `--data-dir=${restoreWorkDir}/data`,
      ],
      ...base,
    },
    { name: 'finish-restore', image: images.operator, args: ['finish-restore', ...paths], ...base },
  ];
}

/** `pod` with the restore init containers in front of its etcd (and the backup's claim, if from one). */
export function withRestore(pod: V1Pod, initContainers: V1Container[], source: RestoreSource): V1Pod {
  const etcd = pod.spec?.containers[0];
  const spec = pod.spec ?? { containers: [] };
  return {
    ...pod,
    spec: {
      ...spec,
      ...(source.claim
        ? {
            volumes: [
              ...(spec.volumes ?? []),
              {
                name: backupSourceVolume,
                persistentVolumeClaim: { claimName: source.claim.claimName, readOnly: true },
              },
            ],
          }
        : {}),
      initContainers: initContainers.map((c) => ({
        ...c,
        ...(etcd?.securityContext ? { securityContext: etcd.securityContext } : {}),
        ...(etcd?.resources ? { resources: etcd.resources } : {}),
      })),
    },
  };
}
