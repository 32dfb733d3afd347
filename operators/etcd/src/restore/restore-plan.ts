import { isAbsolute } from 'node:path';

/** One member of the cluster a snapshot is restored into. */
export interface RestoreMember {
  readonly name: string;
  readonly peerUrl: string;
  readonly clientUrl: string;
  /** Must not exist yet (etcdutl refuses to overwrite, and so does the engine). */
  readonly dataDir: string;
}

export interface RestoreRequest {
  readonly snapshotPath: string;
  readonly members: readonly RestoreMember[];
  /** A token new to this cluster, so restored members can never talk to the old cluster's members. */
  readonly clusterToken: string;
  readonly etcdutlPath: string;
  /**
   * Moves every revision forward by this much (with --mark-compacted), so watchers of the old cluster
   * see a compaction instead of revisions that silently repeat. 0 (default) keeps revisions as they are.
   */
  readonly bumpRevision?: number;
}

/** One etcdutl run and the etcd flags the member then starts with. */
export interface RestoreStep {
  readonly member: RestoreMember;
  readonly command: string;
  readonly args: readonly string[];
  /** Flags for etcd on the restored data directory (state `new`: a new logical cluster). */
  readonly etcdFlags: readonly string[];
}

/** Every member restores from the same snapshot with the same initial cluster and token. */
export interface RestorePlan {
  readonly snapshotPath: string;
  readonly initialCluster: string;
  readonly clusterToken: string;
  readonly steps: readonly RestoreStep[];
}

/** Validates a restore request and lists the exact `etcdutl snapshot restore` runs, one per member. */
export function planRestore(request: RestoreRequest): RestorePlan {
  const problems: string[] = [];
  if (request.members.length === 0) problems.push('no members');
  const names = new Set<string>();
  const peers = new Set<string>();
  const dirs = new Set<string>();
  for (const m of request.members) {
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(m.name))
      problems.push(`member name ${JSON.stringify(m.name)} is not a simple name`);
    if (names.has(m.name)) problems.push(`member name ${m.name} appears twice`);
    if (peers.has(m.peerUrl)) problems.push(`peer URL ${m.peerUrl} appears twice`);
    if (dirs.has(m.dataDir)) problems.push(`data dir ${m.dataDir} appears twice`);
    if (!isAbsolute(m.dataDir)) problems.push(`data dir ${m.dataDir} of ${m.name} is not an absolute path`);
    for (const url of [m.peerUrl, m.clientUrl]) {
      if (!/^https?:\/\/[^,\s]+$/.test(url))
        problems.push(`URL ${JSON.stringify(url)} of ${m.name} is not http(s)`);
    }
    names.add(m.name);
    peers.add(m.peerUrl);
    dirs.add(m.dataDir);
  }
  if (!request.clusterToken) problems.push('empty cluster token');
  if ((request.bumpRevision ?? 0) < 0 || !Number.isInteger(request.bumpRevision ?? 0)) {
    problems.push('bumpRevision must be a whole number ≥ 0');
  }
  if (problems.length > 0) throw new Error(`invalid restore request: ${problems.join('; ')}`);

  const initialCluster = request.members.map((m) => `${m.name}=${m.peerUrl}`).join(',');
  const bump = request.bumpRevision ?? 0;
  const steps = request.members.map((member) => ({
    member,
    command: request.etcdutlPath,
    args: [
      'snapshot',
      'restore',
      request.snapshotPath,
      `--name=${member.name}`,
      `--initial-cluster=${initialCluster}`,
      `--initial-cluster-token=${request.clusterToken}`,
      `--initial-advertise-peer-urls=${member.peerUrl}`,
      `--data-dir=${member.dataDir}`,
      ...(bump > 0 ? [`--bump-revision=${bump}`, '--mark-compacted'] : []),
    ],
    etcdFlags: [
      `--name=${member.name}`,
      `--data-dir=${member.dataDir}`,
      `--initial-advertise-peer-urls=${member.peerUrl}`,
      `--listen-peer-urls=${member.peerUrl}`,
      `--advertise-client-urls=${member.clientUrl}`,
      `--listen-client-urls=${member.clientUrl}`,
      `--initial-cluster=${initialCluster}`,
      `--initial-cluster-token=${request.clusterToken}`,
      '--initial-cluster-state=new',
    ],
  }));
  return { snapshotPath: request.snapshotPath, initialCluster, clusterToken: request.clusterToken, steps };
}
