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
          await file.write(chunk);
        },
        async commit(record) {
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
