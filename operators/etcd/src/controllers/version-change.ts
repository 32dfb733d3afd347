// Whether the members may be rolled to spec.version when it goes back to an older minor. etcd lets a
// member of a minor run on data of the next one only while the cluster version (the minor every
// member agreed on) is still the older one: an upgrade that stopped half-way can go back, one whose
// cluster version moved cannot (the older binary refuses to start: "invalid downgrade"). The API
// server checks this against status.clusterVersion (etcd-cluster-crd.ts); a status written before
// the cluster version moved slips through, so this asks etcd itself before a member is touched.
import { imageOf, minorOf } from '../api/etcd-versions.ts';
import { versionRank } from './cluster-status.ts';

export type VersionChange =
  /** Not going back a minor (an upgrade, a patch, or nothing): rolled as always. */
  | { readonly kind: 'forward' }
  /** Going back a minor while the cluster version is still that minor: rolled back. */
  | { readonly kind: 'back'; readonly clusterVersion: string }
  /**
   * Not carried out (a condition reason and a sentence): nothing is rolled, and members made
   * meanwhile run `keepImage`, the newest image the pods run now.
   */
  | {
      readonly kind: 'refused';
      readonly reason: 'DowngradeRefused' | 'ClusterVersionUnknown';
      readonly message: string;
      readonly keepImage: string;
    };

const major = (version: string) => version.split('.')[0] ?? '';

/**
 * Judges spec.version (`target`) against the versions the member pods' images run and the cluster
 * version etcd reports now (undefined when no member told it). `imageRepository` names the image
 * of a refused change's `keepImage`.
 */
export function judgeVersionChange(
  target: string,
  podVersions: readonly string[],
  clusterVersion: string | undefined,
  imageRepository?: string,
): VersionChange {
  const newest = [...podVersions].sort((a, b) => versionRank(b) - versionRank(a))[0];
  const minorRank = (v: string) => versionRank(`${minorOf(v)}.0`);
  if (!newest || minorRank(target) >= minorRank(newest)) return { kind: 'forward' };
  const keepImage = imageOf(newest, imageRepository) ?? '';
  if (!clusterVersion) {
    return {
      kind: 'refused',
      reason: 'ClusterVersionUnknown',
      keepImage,
      message: `spec.version ${target} goes back from ${newest}, but no member reports etcd's cluster version, so whether ${minorOf(newest)} can go back cannot be known: no member is touched until one does`,
    };
  }
  if (major(clusterVersion) === major(target) && minorOf(clusterVersion) === minorOf(target)) {
    return { kind: 'back', clusterVersion };
  }
  return {
    kind: 'refused',
    reason: 'DowngradeRefused',
    keepImage,
    message: `etcd ${minorOf(clusterVersion)} cannot go back to ${minorOf(target)} once the cluster version is ${minorOf(clusterVersion)} (etcd reports ${clusterVersion}): every member has run it and the older version refuses its data. The members stay on ${newest}; set spec.version to ${newest} again, or restore a backup into a new cluster running ${target}`,
  };
}
