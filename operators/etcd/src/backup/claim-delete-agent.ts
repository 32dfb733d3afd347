// What the operator image runs in the short-lived pod that deletes a backup from a
// PersistentVolumeClaim (retention of scheduled backups, docs/adr/0302): the snapshot, its record
// (`<name>.json`) and an unfinished `<name>.partial`, whichever exist. A file already gone counts
// as deleted, so a pod run again after an operator restart finds nothing to do and succeeds.
import { rm, stat } from 'node:fs/promises';
import { isAbsolute, normalize } from 'node:path';

/** The files of one backup in a claim, as the file sink writes them (file-sink.ts). */
export const backupFilesOf = (file: string): string[] => [file, `${file}.json`, `${file}.partial`];

/** Deletes a backup's files; returns the ones that were there. */
export async function deleteClaimBackup(file: string): Promise<string[]> {
  // The path comes from an EtcdBackup's status: never follow it out of the claim's directory.
  if (!isAbsolute(file) || normalize(file) !== file || file.split('/').includes('..')) {
    throw new Error(`delete-claim-backup: ${JSON.stringify(file)} is not a plain absolute path`);
  }
  const removed: string[] = [];
  for (const path of backupFilesOf(file)) {
    const found = await stat(path).then(
      (s) => s.isFile(),
      () => false,
    );
    await rm(path, { force: true });
    if (found) removed.push(path);
  }
  return removed;
}
