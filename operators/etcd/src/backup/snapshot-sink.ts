import type { VerifiedSnapshot } from './snapshot-trailer.ts';

/** What a backup records about the snapshot it wrote. */
export interface BackupRecord {
  /** Where the sink put it (a file path now; an object URL later). */
  readonly location: string;
  /** Bytes in the file, sha256 trailer included. */
  readonly sizeBytes: number;
  /** Hex sha256 of the database part: the trailer, verified while streaming. */
  readonly sha256: string;
  /** The store revision the snapshot holds. */
  readonly revision: string;
  /** True when `revision` was read from the snapshot itself, false when it is a lower bound read before streaming. */
  readonly revisionExact: boolean;
  /** etcd's HashKV at `revision` on the source member (a uint32 in decimal): what a restore drill compares. */
  readonly hashKV?: string;
  /** The compaction revision that HashKV started from (a restored copy must start from the same). */
  readonly compactRevision?: string;
  readonly memberId: string;
  readonly memberName: string;
  readonly etcdVersion: string;
  readonly startedAt: string;
  readonly finishedAt: string;
}

/** Where snapshots go. The engine writes bytes in order and commits only a verified snapshot. */
export interface SnapshotSink {
  /**
   * Starts a new snapshot object called `name`, invisible to readers until committed. With
   * `signal`, the upload's own calls stop when it aborts (a deposed leader writes nothing more).
   */
  create(name: string, options?: { signal?: AbortSignal }): Promise<SnapshotUpload>;
}

/** One snapshot being written to a sink. */
export interface SnapshotUpload {
  /** A local file with the bytes written so far, if the sink has one (the exact revision is read from it). */
  readonly localPath: string | undefined;
  /**
   * Takes the next bytes, in order. A promise says "wait before the next write" (the sink is
   * behind); nothing returned means the next chunk may come at once.
   */
  write(chunk: Uint8Array): Promise<void> | void;
  /**
   * Present when the upload checks etcd's sha256 trailer itself, on the bytes it writes (the file
   * sink does, on its writer thread): call it once every byte is written; it resolves with the
   * verified size and hash, or rejects as SnapshotTrailerVerifier.finish does. takeBackup then
   * does not hash on its own.
   */
  readonly verifyTrailer?: (what: string) => Promise<VerifiedSnapshot>;
  /** Writes out anything buffered, so `localPath` holds every byte written so far. */
  flush(): Promise<void>;
  /** Makes the snapshot visible with its record; returns its location. */
  commit(record: Omit<BackupRecord, 'location'>): Promise<string>;
  /** Throws away what was written (a failed or unverified snapshot is never left behind). */
  abort(): Promise<void>;
}
