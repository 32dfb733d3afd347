import { open, rename, rm, writeFile, mkdir, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { SnapshotFileWriter } from './snapshot-file-writer.ts';
import type { SnapshotSink, SnapshotUpload } from './snapshot-sink.ts';
import { checkTrailer } from './snapshot-trailer.ts';

/**
 * Snapshots as files in `directory`: written to `<name>.partial` by a writer thread that checks
 * etcd's sha256 trailer on the bytes it writes (SnapshotFileWriter), flushed to disk, renamed to
 * `<name>` once verified, with the backup record next to it in `<name>.json`.
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
  const writer = new SnapshotFileWriter(file.fd, partialPath);
  // fsync started by flush(), while the caller reads the flushed file (its revision).
  let syncing: Promise<void> | undefined;
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await writer.close();
    await file.close();
  };

  return {
    localPath: partialPath,
    write(chunk) {
      syncing = undefined;
      return writer.write(chunk);
    },
    async verifyTrailer(what) {
      const written = await writer.digest();
      return checkTrailer(written.sizeBytes, written.sha256, written.trailer, what);
    },
    async flush() {
      await writer.drain();
      // The bytes are in the file for readers now; making them durable overlaps with what the
      // caller does next, and commit waits for it.
      const sync = writer.sync();
      sync.catch(() => undefined);
      syncing = sync;
    },
    async commit(record) {
      await (syncing ?? writer.sync());
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
