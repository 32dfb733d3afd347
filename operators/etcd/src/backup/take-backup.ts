import { withMemberClient, type EtcdConnection } from '../connection.ts';
import { EtcdEngineError, messageOf } from '../errors.ts';
import { snapshotFileStatus, type SnapshotFileStatus } from '../etcdutl.ts';
import { readClusterHealth, type ClusterHealth } from '../health/cluster-health.ts';
import type { MemberHealth } from '../health/member-status.ts';
import { describeMember } from '../membership/members.ts';
import { SnapshotTrailerVerifier } from './snapshot-trailer.ts';
import { readSnapshotStream } from './snapshot-stream.ts';
import type { BackupRecord, SnapshotSink, SnapshotUpload } from './snapshot-sink.ts';

export interface BackupOptions {
  /** Name of the snapshot in the sink, e.g. `etcd-2026-11-21T01-00-00Z.db`. */
  readonly name: string;
  /**
   * etcdutl, which reads the exact revision and key count from the written file when the sink
   * keeps a local copy (the file sink does). Required, so a caller cannot get a lower-bound
   * revision from a sink that could have given the exact one by leaving it out.
   */
  readonly etcdutlPath: string;
  /** Stops the snapshot stream; the upload is aborted and the call rejects with the signal's reason. */
  readonly signal?: AbortSignal;
}

/** The member to stream from: healthy, voting, no alarm preferred, most applied index, a follower on ties. */
export function chooseSnapshotSource(health: ClusterHealth): MemberHealth | undefined {
  const applied = (m: MemberHealth) => BigInt(m.status?.raftAppliedIndex ?? '0');
  return health.members
    .filter((m) => m.healthy && !m.member.isLearner && m.member.clientUrls.length > 0)
    .sort((a, b) => {
      if (a.alarms.length !== b.alarms.length) return a.alarms.length - b.alarms.length;
      const byIndex = applied(b) - applied(a);
      if (byIndex !== 0n) return byIndex > 0n ? 1 : -1;
      return Number(a.isLeader) - Number(b.isLeader);
    })[0];
}

async function currentRevision(connection: EtcdConnection, clientUrl: string): Promise<string> {
  return withMemberClient(connection, clientUrl, async (client) => {
    const response = await client.kv.range({
      key: Buffer.from('\0'),
      serializable: true,
      keys_only: true,
      limit: 1,
    });
    return response.header.revision;
  });
}

/** An auth token for the snapshot stream, when the connection authenticates (etcd3 does it for other calls). */
async function authToken(connection: EtcdConnection, clientUrl: string): Promise<string | undefined> {
  const auth = connection.auth;
  if (!auth) return undefined;
  const anonymous: EtcdConnection = {
    endpoints: connection.endpoints,
    ...(connection.credentials ? { credentials: connection.credentials } : {}),
    ...(connection.callTimeoutMs ? { callTimeoutMs: connection.callTimeoutMs } : {}),
  };
  return withMemberClient(anonymous, clientUrl, async (client) => {
    const response = await client.auth.authenticate({ name: auth.username, password: auth.password });
    return response.token;
  });
}

async function streamSnapshot(
  connection: EtcdConnection,
  clientUrl: string,
  upload: SnapshotUpload,
  verifier: SnapshotTrailerVerifier,
  signal: AbortSignal | undefined,
): Promise<void> {
  const token = await authToken(connection, clientUrl);
  await readSnapshotStream(
    {
      clientUrl,
      ...(connection.credentials ? { credentials: connection.credentials } : {}),
      ...(token ? { token } : {}),
      ...(signal ? { signal } : {}),
      ...(connection.callTimeoutMs ? { connectTimeoutMs: connection.callTimeoutMs } : {}),
    },
    (blob) => {
      verifier.update(blob);
      return upload.write(blob);
    },
  );
}

async function readSnapshotStatus(
  etcdutlPath: string,
  file: string,
  memberName: string,
): Promise<SnapshotFileStatus> {
  try {
    return await snapshotFileStatus(etcdutlPath, file);
  } catch (error) {
    throw new EtcdEngineError('read snapshot status', 'SnapshotStatusFailed', messageOf(error), {
      member: memberName,
      cause: error,
    });
  }
}

/**
 * Streams a snapshot from the most up-to-date healthy member into `sink`, checks etcd's sha256
 * trailer on the way, and commits it with its record (size, revision, hash). A snapshot that fails
 * the check is aborted, never committed; so is one whose local file etcdutl cannot read.
 */
export async function takeBackup(
  connection: EtcdConnection,
  sink: SnapshotSink,
  options: BackupOptions,
): Promise<BackupRecord> {
  const startedAt = new Date().toISOString();
  const health = await readClusterHealth(connection);
  const source = chooseSnapshotSource(health);
  const clientUrl = source?.member.clientUrls[0];
  if (!source || !clientUrl) {
    throw new EtcdEngineError(
      'choose snapshot source',
      'NoHealthyMember',
      'no healthy voting member to stream a snapshot from',
    );
  }
  const memberName = describeMember(source.member);
  const upload = await sink.create(options.name);
  const verifier = new SnapshotTrailerVerifier();
  try {
    // A sink with a local copy gets the exact revision from etcdutl afterwards; any other gets a
    // lower bound, read before the stream starts (a call of its own, so only when needed).
    const revisionBefore = upload.localPath ? undefined : await currentRevision(connection, clientUrl);
    try {
      await streamSnapshot(connection, clientUrl, upload, verifier, options.signal);
    } catch (error) {
      if (options.signal?.aborted && error === options.signal.reason) throw error;
      throw new EtcdEngineError('stream snapshot', 'SnapshotStreamFailed', messageOf(error), {
        member: memberName,
        cause: error,
      });
    }
    const verified = verifier.finish(`snapshot streamed from ${memberName}`);
    // A file sink starts its fsync here and lets etcdutl read the file meanwhile.
    await upload.flush();
    const status = upload.localPath
      ? await readSnapshotStatus(options.etcdutlPath, upload.localPath, memberName)
      : undefined;
    const record: Omit<BackupRecord, 'location'> = {
      sizeBytes: verified.sizeBytes,
      sha256: verified.sha256,
      // One of the two is always there: the status with a local copy, the lower bound without.
      revision: status?.revision ?? revisionBefore ?? '0',
      revisionExact: status !== undefined,
      totalKeys: status?.totalKeys,
      memberId: source.member.id,
      memberName,
      etcdVersion: source.status?.version ?? '',
      startedAt,
      finishedAt: new Date().toISOString(),
    };
    const location = await upload.commit(record);
    return { location, ...record };
  } catch (error) {
    await upload.abort();
    throw error;
  }
}
