// Base backups: the stanza is created once (idempotent: pgBackRest checks an existing one against
// the server and leaves it), then each backup is a full one whose record is read back from the
// repository, not from the tool's log lines.
import { runPgBackRest, type PgBackRestInvocation } from './pgbackrest-cli.ts';
import { readRepository, type BackupRecord } from './repository-info.ts';

/** Creates the cluster's stanza in the repository, or checks the one there matches this server. */
export async function ensureStanza(invocation: PgBackRestInvocation): Promise<void> {
  await runPgBackRest(invocation, 'stanza-create');
}

/**
 * Takes a full base backup and returns its record. It ends once the WAL the backup needs is in
 * the repository (pgBackRest's archive check), so the backup can be restored as soon as it returns.
 */
export async function takeBaseBackup(invocation: PgBackRestInvocation): Promise<BackupRecord> {
  const before = new Set((await readRepository(invocation)).backups.map((b) => b.label));
  await runPgBackRest(invocation, 'backup', ['--type=full']);
  const added = (await readRepository(invocation)).backups.filter((b) => !before.has(b.label));
  const record = added[added.length - 1];
  if (!record) throw new Error('pgbackrest backup succeeded but the repository lists no new backup');
  return record;
}
