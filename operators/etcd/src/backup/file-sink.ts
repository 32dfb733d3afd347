import { open, rename, rm, writeFile, mkdir, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { SnapshotSink, SnapshotUpload } from './snapshot-sink.ts';

// gRPC delivers 32 KiB chunks; a write per chunk would cost a syscall and a thread-pool round trip
// each, so chunks are gathered and written 1 MiB at a time, with one gathering write (writev, no
// copy) in flight while the stream goes on. Only when 8 MiB wait behind a slow disk does `write`
// make the stream wait: that bounds memory and passes the disk's backpressure on to etcd.
const batchBytes = 1024 * 1024;
const maxQueuedBytes = 8 * 1024 * 1024;
// Every 32 MiB written, a datasync starts beside the writes: the disk takes the bytes while the
// stream goes on, and the fsync before commit has only the last few MiB left to wait for.
const syncEveryBytes = 32 * 1024 * 1024;

/**
 * Snapshots as files in `directory`: written to `<name>.partial`, flushed to disk, renamed to `<name>`
 * once verified, with the backup record next to it in `<name>.json`.
 */
export function fileSnapshotSink(directory: string): SnapshotSink {
  return {
    async create(name) {
      if (name.includes('/') || name.startsWith('.'))
        throw new Error(`invalid snapshot name ${JSON.stringify(name)}`);
      await mkdir(directory, { recursive: true });
      const finalPath = join(directory, name);
      const partialPath = `${finalPath}.partial`;
      const file: FileHandle = await open(partialPath, 'w', 0o600);
      return fileUpload(file, partialPath, finalPath);
    },
  };
}

function fileUpload(file: FileHandle, partialPath: string, finalPath: string): SnapshotUpload {
  let queued: Uint8Array[] = [];
  let queuedBytes = 0;
  // The write in flight, if any; it never rejects (a failure is kept in `failure`, thrown by the
  // next call), so nobody is left with an unhandled rejection while the stream goes on.
  let writing: Promise<void> | undefined;
  let failure: Error | undefined;
  // fsync started by flush(), while the caller reads the flushed file (its revision).
  let syncing: Promise<void> | undefined;
  // The datasync running beside the writes, if any (never rejects, as `writing`), and the bytes
  // written since the last one started.
  let backgroundSync: Promise<void> | undefined;
  let unsyncedBytes = 0;

  const startBackgroundSync = () => {
    unsyncedBytes = 0;
    backgroundSync = file.datasync().then(
      () => {
        backgroundSync = undefined;
      },
      (error: unknown) => {
        backgroundSync = undefined;
        failure ??= new Error(`sync ${partialPath}`, { cause: error });
      },
    );
  };
  const startWrite = () => {
    const batch = queued;
    const bytes = queuedBytes;
    queued = [];
    queuedBytes = 0;
    writing = file.writev(batch).then(
      () => {
        writing = undefined;
        unsyncedBytes += bytes;
        if (unsyncedBytes >= syncEveryBytes && !backgroundSync) startBackgroundSync();
        if (queuedBytes >= batchBytes) startWrite();
      },
      (error: unknown) => {
        writing = undefined;
        failure ??= new Error(`write ${partialPath}`, { cause: error });
      },
    );
  };
  const waitForRoom = async () => {
    while (writing && queuedBytes >= maxQueuedBytes) await writing;
    throwIfFailed();
  };
  const throwIfFailed = () => {
    if (failure) throw failure;
  };
  const drain = async () => {
    while (writing || queuedBytes > 0) {
      throwIfFailed();
      if (!writing) startWrite();
      await writing;
    }
    throwIfFailed();
  };
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await writing;
    await backgroundSync;
    await file.close();
  };

  return {
    localPath: partialPath,
    // Not async: a chunk that only joins the queue returns nothing to wait for, which lets the
    // stream go on without a promise round per chunk.
    write(chunk) {
      throwIfFailed();
      syncing = undefined;
      queued.push(chunk);
      queuedBytes += chunk.length;
      if (!writing && queuedBytes >= batchBytes) startWrite();
      if (writing && queuedBytes >= maxQueuedBytes) return waitForRoom();
      return undefined;
    },
    async flush() {
      await drain();
      // The bytes are in the file for readers now; making them durable overlaps with what the
      // caller does next, and commit waits for it.
      const sync = file.sync();
      sync.catch(() => undefined);
      syncing = sync;
    },
    async commit(record) {
      await drain();
      await backgroundSync;
      throwIfFailed();
      await (syncing ?? file.sync());
      await close();
      await rename(partialPath, finalPath);
      await writeFile(
        `${finalPath}.json`,
        `${JSON.stringify({ location: finalPath, ...record }, null, 2)}\n`,
      );
      return finalPath;
    },
    async abort() {
      await syncing?.catch(() => undefined);
      await close();
      await rm(partialPath, { force: true });
    },
  };
}
