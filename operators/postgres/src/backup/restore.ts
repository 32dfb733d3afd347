// A restore into a new, empty data directory: pgBackRest copies the chosen backup's files in
// (`--type=none`: it writes no recovery settings of its own), then the settings from
// recovery-settings.ts and recovery.signal make the server replay the archive to the target on
// its first start and promote there.
import { appendFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runPgBackRest, type PgBackRestInvocation } from './pgbackrest-cli.ts';
import { renderRecoverySettings, type RecoverySettings } from './recovery-settings.ts';
import type { BackupRecord } from './repository-info.ts';

/** Copies `backup` into `dataDir`, which must exist and be empty (the tool refuses otherwise). */
export async function restoreBackupFiles(
  invocation: PgBackRestInvocation,
  backup: BackupRecord,
  dataDir: string,
): Promise<void> {
  await runPgBackRest(invocation, 'restore', [
    `--set=${backup.label}`,
    '--type=none',
    `--pg1-path=${dataDir}`,
  ]);
}

/**
 * Makes the restored `dataDir` recover with `settings` on its next start. postgresql.auto.conf is
 * read last, so these win over anything the backup's own configuration says.
 */
export async function writeRecoverySettings(dataDir: string, settings: RecoverySettings): Promise<void> {
  await appendFile(
    join(dataDir, 'postgresql.auto.conf'),
    `# Recovery settings of the homeostat restore\n${renderRecoverySettings(settings)}`,
  );
  await writeFile(join(dataDir, 'recovery.signal'), '');
}
