// The settings a restored data directory starts with: where WAL comes from, where replay stops,
// and what happens there. Written by this layer, not by the tool, so that the operator owns them
// the way it owns the rest of the server's configuration.
import { confLine, restoreCommand, type PgBackRestTarget } from './wal-commands.ts';
import type { RecoveryTarget } from './recovery-target.ts';

/** postgresql.conf settings, by name. */
export type RecoverySettings = ReadonlyMap<string, string>;

/**
 * Settings for a restore to `target`: replay stops just before the first transaction past it
 * (inclusive for a time or an LSN: what committed at the target is kept) and the server is
 * promoted there, starting a new timeline as a new cluster's primary. `dataDir` is the restored
 * server's data directory.
 */
export function recoverySettings(
  target: RecoveryTarget,
  tool: PgBackRestTarget,
  dataDir: string,
): RecoverySettings {
  const settings = new Map<string, string>([
    ['restore_command', restoreCommand(tool, dataDir)],
    ['recovery_target_timeline', 'latest'],
  ]);
  switch (target.type) {
    case 'latest':
      // No target: replay to the archive's end, then promote (recovery.signal's default action).
      return settings;
    case 'time':
      // PostgreSQL reads a numeric offset; ISO's "Z" is not among the zone names it accepts.
      settings.set('recovery_target_time', target.time.toISOString().replace('T', ' ').replace('Z', '+00'));
      break;
    case 'lsn':
      settings.set('recovery_target_lsn', target.lsn);
      break;
    case 'name':
      settings.set('recovery_target_name', target.name);
      break;
  }
  settings.set('recovery_target_inclusive', 'on');
  settings.set('recovery_target_action', 'promote');
  return settings;
}

/** The settings as postgresql.conf lines. */
export function renderRecoverySettings(settings: RecoverySettings): string {
  return [...settings].map(([name, value]) => confLine(name, value)).join('\n') + '\n';
}
