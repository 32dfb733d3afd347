// The etcd versions this operator runs, each with the image it ships for it. This list is the one
// place they are written: the CRD's version enum, its default (the newest), the upgrade rules and
// the images members run all come from it. A test checks the local cluster builds every image.

/** One etcd release the operator supports. */
export interface EtcdRelease {
  /** major.minor.patch, as `spec.version` takes it and etcd reports it. */
  readonly version: string;
  readonly image: string;
}

/** Supported releases, oldest first. */
export const etcdReleases: readonly EtcdRelease[] = [
  { version: '3.6.16', image: 'gcr.io/etcd-development/etcd:v3.6.16' },
];

/** The versions `spec.version` accepts. */
export const supportedVersions: readonly string[] = etcdReleases.map((r) => r.version);

/** The version of a new EtcdCluster that names none: the newest shipped. */
export const defaultVersion: string = supportedVersions[supportedVersions.length - 1] ?? '';

/** The image that runs `version`, or undefined for a version this operator does not ship. */
export function imageOf(version: string): string | undefined {
  return etcdReleases.find((r) => r.version === version)?.image;
}

/** major.minor of a version ("3.6.16" → "3.6"); etcd's data compatibility is decided per minor. */
export function minorOf(version: string): string {
  return version.split('.').slice(0, 2).join('.');
}
