import { open, rename, rm, writeFile, mkdir, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { SnapshotSink, SnapshotUpload } from './snapshot-sink.ts';

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
      // gRPC delivers 32 KiB chunks; one write per chunk costs a syscall and an await each, so
      // chunks are gathered into 1 MiB writes.
      let pending: Uint8Array[] = [];
      let pendingBytes = 0;
      const flush = async () => {
        if (pendingBytes === 0) return;
        const data = Buffer.concat(pending, pendingBytes);
        pending = [];
        pendingBytes = 0;
        await file.write(data);
      };
      let closed = false;
      const close = async () => {
        if (!closed) {
          closed = true;
          await file.close();
        }
      };
      const upload: SnapshotUpload = {
        localPath: partialPath,
        async write(chunk) {
          pending.push(chunk);
          pendingBytes += chunk.length;
          if (pendingBytes >= 1024 * 1024) await flush();
        },
        async flush() {
          await flush();
        },
        async commit(record) {
          await flush();
          await file.sync();
          await close();
          await rename(partialPath, finalPath);
          await writeFile(
            `${finalPath}.json`,
            `${JSON.stringify({ location: finalPath, ...record }, null, 2)}\n`,
          );
          return finalPath;
        },
        async abort() {
          await close();
          await rm(partialPath, { force: true });
        },
      };
      return upload;
    },
  };
}
