// The etcd versions this operator runs, each with the image it ships for it. This list is the one
// place they are written: the CRD's version enum, its default (the newest), the upgrade rules and
// the images members run all come from it. A test checks the local cluster builds every image.

/** Where etcd's own release images are; an operator flag may name a mirror with the same tags. */
export const defaultEtcdRepository = 'gcr.io/etcd-development/etcd';

/** One etcd release the operator supports. */
export interface EtcdRelease {
  /** major.minor.patch, as `spec.version` takes it and etcd reports it. */
  readonly version: string;
  /** The image in the default repository (tag v<version>, as etcd publishes it). */
  readonly image: string;
}

/** Supported versions, oldest first. */
export const supportedVersions: readonly string[] = ['3.6.16', '3.7.3'];

export const etcdReleases: readonly EtcdRelease[] = supportedVersions.map((version) => ({
  version,
  image: `${defaultEtcdRepository}:v${version}`,
}));

/** The version of a new EtcdCluster that names none: the newest shipped. */
export const defaultVersion: string = supportedVersions[supportedVersions.length - 1] ?? '';

/** The image that runs `version` from `repository`, or undefined for a version this operator does not ship. */
export function imageOf(version: string, repository = defaultEtcdRepository): string | undefined {
  return supportedVersions.includes(version) ? `${repository}:v${version}` : undefined;
}

/** major.minor of a version ("3.6.16" → "3.6"); etcd's data compatibility is decided per minor. */
export function minorOf(version: string): string {
  return version.split('.').slice(0, 2).join('.');
}
