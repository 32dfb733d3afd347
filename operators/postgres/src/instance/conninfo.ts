// libpq's keyword/value connection strings (the format of primary_conninfo), parsed and printed
// so the engine can change the host and port of a standby's upstream and keep everything else
// (user, passfile, application_name) that the entrypoint wrote.

/** Parses `key=value key='quoted \' value'` into an ordered map. */
export function parseConninfo(text: string): Map<string, string> {
  const result = new Map<string, string>();
  let i = 0;
  const skipSpace = () => {
    while (i < text.length && /\s/.test(text[i] ?? '')) i++;
  };
  while (true) {
    skipSpace();
    if (i >= text.length) return result;
    const eq = text.indexOf('=', i);
    if (eq < 0) throw new Error(`conninfo: missing '=' after '${text.slice(i)}'`);
    const key = text.slice(i, eq).trim();
    i = eq + 1;
    skipSpace();
    let value = '';
    if (text[i] === "'") {
      i++;
      while (i < text.length && text[i] !== "'") {
        if (text[i] === '\\') i++;
        value += text[i] ?? '';
        i++;
      }
      if (text[i] !== "'") throw new Error(`conninfo: unterminated quoted value for '${key}'`);
      i++;
    } else {
      while (i < text.length && !/\s/.test(text[i] ?? '')) {
        if (text[i] === '\\') i++;
        value += text[i] ?? '';
        i++;
      }
    }
    result.set(key, value);
  }
}

/** Prints a map as a conninfo string, quoting every value. */
export function formatConninfo(entries: ReadonlyMap<string, string>): string {
  return [...entries]
    .map(([key, value]) => `${key}='${value.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`)
    .join(' ');
}
