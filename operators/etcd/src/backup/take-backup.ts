import { withMemberClient, type EtcdConnection } from '../connection.ts';
import { EtcdEngineError, messageOf } from '../errors.ts';
import { readClusterHealth, type ClusterHealth } from '../health/cluster-health.ts';
import { memberHashKV } from '../health/hash-kv.ts';
import type { MemberHealth } from '../health/member-status.ts';
import { describeMember } from '../membership/members.ts';
import { readSnapshotRevision } from './snapshot-revision.ts';
import { SnapshotTrailerVerifier } from './snapshot-trailer.ts';
import { readSnapshotStream } from './snapshot-stream.ts';
import type { BackupRecord, SnapshotSink, SnapshotUpload } from './snapshot-sink.ts';

export interface BackupOptions {
  /** Name of the snapshot in the sink, e.g. `etcd-2026-11-21T01-00-00Z.db`. */
  readonly name: string;
  /** Stops the snapshot stream; the upload is aborted and the call rejects with the signal's reason. */
  readonly signal?: AbortSignal;
  /** Told how long each step took, in seconds, as it ends (bench:snapshot prints where the time goes). */
  readonly onPhase?: (phase: BackupPhase, seconds: number) => void;
}

/** The steps of takeBackup, in order. */
export type BackupPhase = 'choose source' | 'stream' | 'verify' | 'flush' | 'revision' | 'hash' | 'commit';

/** Runs `work`, then tells `onPhase` how long it took (when there is one to tell). */
async function phase<T>(
  onPhase: BackupOptions['onPhase'],
  name: BackupPhase,
  work: () => T | Promise<T>,
): Promise<T> {
  if (!onPhase) return work();
  const start = process.hrtime.bigint();
  const result = await work();
  onPhase(name, Number(process.hrtime.bigint() - start) / 1e9);
  return result;
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

/** How long the member may take to hash its key space. */
const hashTimeoutMs = 60_000;

/**
 * The member's HashKV at `revision`, which a restore drill compares with the restored copy's. A
 * revision compacted away meanwhile (a lower bound read before the stream, then compacted) has no
 * hash: the backup is as good without it, and a drill then says it could not compare.
 */
async function hashAtRevision(
  connection: EtcdConnection,
  clientUrl: string,
  revision: string,
): Promise<{ hashKV: string; compactRevision: string } | undefined> {
  // HashKV reads the whole key bucket: a large database takes longer than the usual call deadline.
  const patient: EtcdConnection = { ...connection, callTimeoutMs: hashTimeoutMs };
  try {
    const { hash, compactRevision } = await withMemberClient(patient, clientUrl, (client) =>
      memberHashKV(client, revision),
    );
    return { hashKV: hash, compactRevision };
  } catch {
    return undefined;
  }
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
  verifier: SnapshotTrailerVerifier | undefined,
  signal: AbortSignal | undefined,
): Promise<void> {
  const token = await authToken(connection, clientUrl);
  // Each blob is hashed here (unless the upload checks the trailer itself), then goes to the sink;
  // the stream waits only when the sink is behind.
  const take = verifier
    ? (blob: Buffer) => {
        verifier.update(blob);
        return upload.write(blob);
      }
    : (blob: Buffer) => upload.write(blob);
  await readSnapshotStream(
    {
      clientUrl,
      ...(connection.credentials ? { credentials: connection.credentials } : {}),
      ...(token ? { token } : {}),
      ...(signal ? { signal } : {}),
      ...(connection.callTimeoutMs ? { connectTimeoutMs: connection.callTimeoutMs } : {}),
    },
    take,
  );
}

/** The exact revision from the written file's bbolt pages; a file that has none fails the backup. */
async function readFileRevision(file: string, memberName: string): Promise<string> {
  try {
    return await readSnapshotRevision(file);
  } catch (error) {
    throw new EtcdEngineError('read snapshot revision', 'SnapshotRevisionUnreadable', messageOf(error), {
      member: memberName,
      cause: error,
    });
  }
}

/**
 * Streams a snapshot from the most up-to-date healthy member into `sink`, checks etcd's sha256
 * trailer on the way, and commits it with its record (size, revision, hash). A snapshot that fails
 * the check is aborted, never committed; so is one whose local file holds no readable revision.
 */
export async function takeBackup(
  connection: EtcdConnection,
  sink: SnapshotSink,
  options: BackupOptions,
): Promise<BackupRecord> {
  const startedAt = new Date().toISOString();
  const { onPhase } = options;
  const source = await phase(onPhase, 'choose source', async () =>
    chooseSnapshotSource(await readClusterHealth(connection)),
  );
  const clientUrl = source?.member.clientUrls[0];
  if (!source || !clientUrl) {
    throw new EtcdEngineError(
      'choose snapshot source',
      'NoHealthyMember',
      'no healthy voting member to stream a snapshot from',
    );
  }
  const memberName = describeMember(source.member);
  const upload = await sink.create(options.name, options.signal ? { signal: options.signal } : {});
  // An upload that checks the trailer on the bytes it writes (the file sink, off the main thread)
  // saves hashing them here as well.
  const verifier = upload.verifyTrailer ? undefined : new SnapshotTrailerVerifier();
  try {
    // A sink with a local copy gets the exact revision from the file afterwards; any other gets a
    // lower bound, read before the stream starts (a call of its own, so only when needed).
    const revisionBefore = upload.localPath
      ? undefined
      : await phase(onPhase, 'revision', () => currentRevision(connection, clientUrl));
    try {
      await phase(onPhase, 'stream', () =>
        streamSnapshot(connection, clientUrl, upload, verifier, options.signal),
      );
    } catch (error) {
      if (options.signal?.aborted && error === options.signal.reason) throw error;
      throw new EtcdEngineError('stream snapshot', 'SnapshotStreamFailed', messageOf(error), {
        member: memberName,
        cause: error,
      });
    }
    const what = `snapshot streamed from ${memberName}`;
    const verified = await phase(onPhase, 'verify', () =>
      verifier ? verifier.finish(what) : upload.verifyTrailer?.(what),
    );
    if (!verified) throw new Error(`${what}: the upload checks its trailer, but gave no result`);
    // A file sink starts its fsync here and lets the revision be read from the file meanwhile.
    await phase(onPhase, 'flush', () => upload.flush());
    const localPath = upload.localPath;
    const exactRevision = localPath
      ? await phase(onPhase, 'revision', () => readFileRevision(localPath, memberName))
      : undefined;
    // One of the two is always there: the file's revision with a local copy, the lower bound without.
    const revision = exactRevision ?? revisionBefore ?? '0';
    // HashKV counts every revision from the compaction up to `revision`, which the snapshot holds
    // (exact or a lower bound): a restored copy of it gives the same hash at the same revision.
    const hashed = await phase(onPhase, 'hash', () => hashAtRevision(connection, clientUrl, revision));
    const record: Omit<BackupRecord, 'location'> = {
      sizeBytes: verified.sizeBytes,
      sha256: verified.sha256,
      revision,
      revisionExact: exactRevision !== undefined,
      ...(hashed ?? {}),
      memberId: source.member.id,
      memberName,
      etcdVersion: source.status?.version ?? '',
      startedAt,
      finishedAt: new Date().toISOString(),
    };
    const location = await phase(onPhase, 'commit', () => upload.commit(record));
    return { location, ...record };
  } catch (error) {
    await upload.abort();
    throw error;
  }
}
