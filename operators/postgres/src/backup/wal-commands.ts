// The two commands PostgreSQL runs for WAL: archive_command on the primary (each finished segment
// to the repository) and restore_command in recovery (a segment back). Both name the config file
// and the stanza; neither carries a credential, which the server's environment or the config
// include path holds.

/** Where the tool finds its configuration and which stanza is the cluster's. */
export interface PgBackRestTarget {
  readonly configFile: string;
  /** A directory of further config files (the credentials, mounted from a Secret), if used. */
  readonly configIncludePath?: string;
  readonly stanza: string;
  /** The pgbackrest binary; found on PATH when absent. */
  readonly binary?: string;
}

/** A word for a shell command line: PostgreSQL runs these commands through /bin/sh. */
function shellWord(word: string): string {
  return /^[A-Za-z0-9_./=:@%+-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

/** The tool's options every command shares, as shell words. */
export function commonOptions(target: PgBackRestTarget): string[] {
  return [
    `--config=${target.configFile}`,
    ...(target.configIncludePath ? [`--config-include-path=${target.configIncludePath}`] : []),
    `--stanza=${target.stanza}`,
  ];
}

/** archive_command's value: pushes the segment at %p. */
export function archiveCommand(target: PgBackRestTarget): string {
  return [target.binary ?? 'pgbackrest', ...commonOptions(target), 'archive-push', '%p']
    .map(shellWord)
    .join(' ');
}

/**
 * restore_command's value: fetches segment %f into %p. `dataDir` is the recovering server's own
 * data directory: archive-get refuses to run for a server whose working directory differs from
 * the configured pg1-path, as it does when a restore reads another cluster's repository.
 */
export function restoreCommand(target: PgBackRestTarget, dataDir?: string): string {
  const path = dataDir === undefined ? [] : [`--pg1-path=${dataDir}`];
  return [target.binary ?? 'pgbackrest', ...commonOptions(target), ...path, 'archive-get', '%f', '"%p"']
    .map((w) => (w === '"%p"' ? w : shellWord(w)))
    .join(' ');
}

/** A postgresql.conf line `name = 'value'`, the value quoted as PostgreSQL reads it. */
export function confLine(name: string, value: string): string {
  if (/[\r\n]/.test(value)) throw new Error(`${name} must not contain a line break`);
  return `${name} = '${value.replaceAll("'", "''")}'`;
}
